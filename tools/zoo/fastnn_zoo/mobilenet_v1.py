"""MobileNet v1 of TF-slim nets/mobilenet_v1.py, at any depth_multiplier
(mobilenet_v1 1.0, mobilenet_v1_075/050/025)."""
from torch import nn

from .layers import ConvBN, conv2d, trunc_normal

# mobilenet_v1_arg_scope: BN decay 0.9997, epsilon 0.001, ReLU6, weights
# truncated normal with stddev 0.09.
_BN_DECAY = 0.9997
_INIT = trunc_normal(0.09)

# _CONV_DEFS after the first 3x3/2 conv to 32 channels: one (stride, depth)
# per depthwise-separable layer.
_SEPARABLE_DEFS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512),
                   (1, 512), (1, 512), (1, 512), (1, 512), (1, 512),
                   (2, 1024), (1, 1024)]

# mobilenet_v1's min_depth.
_MIN_DEPTH = 8


def _conv(in_channels, out_channels, kernel_size, stride=1, groups=1):
    return ConvBN(in_channels, out_channels, kernel_size, _INIT, _BN_DECAY,
                  stride=stride, padding=kernel_size // 2, groups=groups,
                  activation=nn.ReLU6)


class MobileNetV1(nn.Module):
    def __init__(self, depth_multiplier=1.0, num_classes=1000, image_size=224,
                 in_channels=3):
        super().__init__()

        def depth(d):
            return max(int(d * depth_multiplier), _MIN_DEPTH)

        channels = depth(32)
        layers = [_conv(in_channels, channels, 3, stride=2)]
        for stride, width in _SEPARABLE_DEFS:
            # slim.separable_conv2d with num_outputs=None: depthwise only,
            # followed by a separate 1x1 pointwise conv.
            layers.append(_conv(channels, channels, 3, stride=stride,
                                groups=channels))
            layers.append(_conv(channels, depth(width), 1))
            channels = depth(width)
        self.features = nn.Sequential(*layers)
        # AvgPool_1a uses the whole final map (7x7 at 224 px, reduced for
        # small inputs), i.e. global average pooling.
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.001)  # dropout_keep_prob=0.999
        self.logits = conv2d(channels, num_classes, 1, _INIT)

    def forward(self, x):
        x = self.dropout(self.pool(self.features(x)))
        return self.logits(x).flatten(1)
