"""MobileNet v1 (width 1.0) of TF-slim nets/mobilenet_v1.py."""
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


def _conv(in_channels, out_channels, kernel_size, stride=1, groups=1):
    return ConvBN(in_channels, out_channels, kernel_size, _INIT, _BN_DECAY,
                  stride=stride, padding=kernel_size // 2, groups=groups,
                  activation=nn.ReLU6)


class MobileNetV1(nn.Module):
    def __init__(self, num_classes=1000, image_size=224, in_channels=3):
        super().__init__()
        layers = [_conv(in_channels, 32, 3, stride=2)]
        channels = 32
        for stride, depth in _SEPARABLE_DEFS:
            # slim.separable_conv2d with num_outputs=None: depthwise only,
            # followed by a separate 1x1 pointwise conv.
            layers.append(_conv(channels, channels, 3, stride=stride,
                                groups=channels))
            layers.append(_conv(channels, depth, 1))
            channels = depth
        self.features = nn.Sequential(*layers)
        # AvgPool_1a uses the whole final map (7x7 at 224 px, reduced for
        # small inputs), i.e. global average pooling.
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.001)  # dropout_keep_prob=0.999
        self.logits = conv2d(channels, num_classes, 1, _INIT)

    def forward(self, x):
        x = self.dropout(self.pool(self.features(x)))
        return self.logits(x).flatten(1)
