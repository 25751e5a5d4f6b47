"""Inception v2 (BN-Inception) of TF-slim nets/inception_v2.py, at
depth_multiplier 1 with slim's default use_separable_conv: Conv2d_1a_7x7 is a
separable conv (7x7 depthwise with channel multiplier 8, no BN of its own,
then a 1x1 pointwise conv with BN).  Everything is SAME; "5x5" branches are
two 3x3 convs.
"""
from torch import nn

from .inception_blocks import Concat
from .layers import ConvBN, avg_pool_same, conv2d, trunc_normal, variance_scaling

# inception_arg_scope: BN decay 0.9997, variance scaling weights unless a
# layer sets its own truncated normal.
_BN_DECAY = 0.9997

# Inception modules: (branch_0 1x1, branch_1 1x1 -> 3x3,
# branch_2 1x1 -> 3x3 -> 3x3, branch_3 1x1 after a 3x3 pool, pool kind).
_MIXED = {
    "Mixed_3b": (64, (64, 64), (64, 96), 32, "avg"),
    "Mixed_3c": (64, (64, 96), (64, 96), 64, "avg"),
    "Mixed_4b": (224, (64, 96), (96, 128), 128, "avg"),
    "Mixed_4c": (192, (96, 128), (96, 128), 128, "avg"),
    "Mixed_4d": (160, (128, 160), (128, 160), 96, "avg"),
    "Mixed_4e": (96, (128, 192), (160, 192), 96, "avg"),
    "Mixed_5b": (352, (192, 320), (160, 224), 128, "avg"),
    "Mixed_5c": (352, (192, 320), (192, 224), 128, "max"),
}
# Grid reductions: (branch_0 1x1 -> 3x3/2, branch_1 1x1 -> 3x3 -> 3x3/2),
# branch_2 a 3x3/2 max pool.
_REDUCTIONS = {"Mixed_4a": ((128, 160), (64, 96)),
               "Mixed_5a": ((128, 192), (192, 256))}


def _conv(in_channels, out_channels, kernel_size,
          weight_init=variance_scaling, stride=1):
    return ConvBN(in_channels, out_channels, kernel_size, weight_init,
                  _BN_DECAY, stride=stride, padding=kernel_size // 2)


def _mixed(in_channels, b0, b1, b2, b3, pool):
    """An Inception module and its output channels."""
    pool_layer = (avg_pool_same(3) if pool == "avg"
                  else nn.MaxPool2d(3, 1, padding=1))
    block = Concat(
        _conv(in_channels, b0, 1),
        nn.Sequential(_conv(in_channels, b1[0], 1, trunc_normal(0.09)),
                      _conv(b1[0], b1[1], 3)),
        nn.Sequential(_conv(in_channels, b2[0], 1, trunc_normal(0.09)),
                      _conv(b2[0], b2[1], 3), _conv(b2[1], b2[1], 3)),
        nn.Sequential(pool_layer,
                      _conv(in_channels, b3, 1, trunc_normal(0.1))))
    return block, b0 + b1[1] + b2[1] + b3


def _reduction(in_channels, b0, b1):
    """A grid reduction and its output channels."""
    block = Concat(
        nn.Sequential(_conv(in_channels, b0[0], 1, trunc_normal(0.09)),
                      _conv(b0[0], b0[1], 3, stride=2)),
        nn.Sequential(_conv(in_channels, b1[0], 1, trunc_normal(0.09)),
                      _conv(b1[0], b1[1], 3),
                      _conv(b1[1], b1[1], 3, stride=2)),
        nn.MaxPool2d(3, 2, padding=1))
    return block, b0[1] + b1[1] + in_channels


class SeparableStem(nn.Module):
    """Conv2d_1a_7x7: slim.separable_conv2d(64, [7, 7], depth_multiplier=8,
    stride=2) under the BN arg_scope: depthwise (no bias, no BN), pointwise
    1x1, then BN and ReLU; both weights truncated normal 1.0."""

    def __init__(self, in_channels, out_channels, channel_multiplier):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels,
                                   in_channels * channel_multiplier, 7,
                                   stride=2, padding=3, groups=in_channels,
                                   bias=False)
        trunc_normal(1.0)(self.depthwise.weight)
        self.pointwise = _conv(in_channels * channel_multiplier, out_channels,
                               1, trunc_normal(1.0))

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


class InceptionV2(nn.Module):
    def __init__(self, num_classes=1000, image_size=224, in_channels=3):
        super().__init__()
        # depthwise_multiplier = min(int(depth(64) / 3), 8), from the
        # channels slim assumes (3): kept at 8 whatever in_channels is.
        layers = [
            SeparableStem(in_channels, 64, 8),
            nn.MaxPool2d(3, 2, padding=1),
            _conv(64, 64, 1, trunc_normal(0.1)),
            _conv(64, 192, 3),
            nn.MaxPool2d(3, 2, padding=1),
        ]
        channels = 192
        for name in ("Mixed_3b", "Mixed_3c", "Mixed_4a", "Mixed_4b",
                     "Mixed_4c", "Mixed_4d", "Mixed_4e", "Mixed_5a",
                     "Mixed_5b", "Mixed_5c"):
            if name in _REDUCTIONS:
                block, channels = _reduction(channels, *_REDUCTIONS[name])
            else:
                block, channels = _mixed(channels, *_MIXED[name])
            layers.append(block)
        self.features = nn.Sequential(*layers)
        # AvgPool_1a_7x7 (VALID, reduced for small inputs): global at 224 px.
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)  # dropout_keep_prob=0.8
        self.logits = conv2d(channels, num_classes, 1, variance_scaling)

    def forward(self, x):
        x = self.dropout(self.pool(self.features(x)))
        return self.logits(x).flatten(1)
