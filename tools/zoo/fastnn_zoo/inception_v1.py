"""Inception v1 (GoogLeNet) of TF-slim nets/inception_v1.py.

Like slim, no auxiliary heads, batch norm after every conv, and the "5x5"
branch uses 3x3 convolutions.
"""
import torch
from torch import nn

from .layers import ConvBN, conv2d, trunc_normal, variance_scaling

# inception_arg_scope batch norm.
_BN_DECAY = 0.9997

# Mixed blocks: (name, branch_0 1x1, branch_1 1x1 -> 3x3,
#                branch_2 1x1 -> 3x3, branch_3 pool -> 1x1)
_MIXED = {
    "Mixed_3b": (64, (96, 128), (16, 32), 32),
    "Mixed_3c": (128, (128, 192), (32, 96), 64),
    "Mixed_4b": (192, (96, 208), (16, 48), 64),
    "Mixed_4c": (160, (112, 224), (24, 64), 64),
    "Mixed_4d": (128, (128, 256), (24, 64), 64),
    "Mixed_4e": (112, (144, 288), (32, 64), 64),
    "Mixed_4f": (256, (160, 320), (32, 128), 128),
    "Mixed_5b": (256, (160, 320), (32, 128), 128),
    "Mixed_5c": (384, (192, 384), (48, 128), 128),
}


def _conv(in_channels, out_channels, kernel_size, stride=1):
    # inception_v1_base overrides the initializer with truncated normal 0.01.
    return ConvBN(in_channels, out_channels, kernel_size, trunc_normal(0.01),
                  _BN_DECAY, stride=stride, padding=kernel_size // 2)


class Mixed(nn.Module):
    def __init__(self, in_channels, b0, b1, b2, b3):
        super().__init__()
        self.branch_0 = _conv(in_channels, b0, 1)
        self.branch_1 = nn.Sequential(_conv(in_channels, b1[0], 1),
                                      _conv(b1[0], b1[1], 3))
        self.branch_2 = nn.Sequential(_conv(in_channels, b2[0], 1),
                                      _conv(b2[0], b2[1], 3))
        self.branch_3 = nn.Sequential(nn.MaxPool2d(3, 1, padding=1),
                                      _conv(in_channels, b3, 1))
        self.out_channels = b0 + b1[1] + b2[1] + b3

    def forward(self, x):
        return torch.cat([self.branch_0(x), self.branch_1(x),
                          self.branch_2(x), self.branch_3(x)], 1)


class InceptionV1(nn.Module):
    def __init__(self, num_classes=1000, image_size=224, in_channels=3):
        super().__init__()
        layers = [
            _conv(in_channels, 64, 7, stride=2),
            nn.MaxPool2d(3, 2, padding=1),
            _conv(64, 64, 1),
            _conv(64, 192, 3),
            nn.MaxPool2d(3, 2, padding=1),
        ]
        channels = 192
        for name, widths in _MIXED.items():
            if name == "Mixed_4b":
                layers.append(nn.MaxPool2d(3, 2, padding=1))
            elif name == "Mixed_5b":
                # MaxPool_5a_2x2 (SAME): ceil_mode gives TF's ceil(n / 2)
                # also for odd sizes, where SAME pads one row/column.
                layers.append(nn.MaxPool2d(2, 2, ceil_mode=True))
            mixed = Mixed(channels, *widths)
            layers.append(mixed)
            channels = mixed.out_channels
        self.features = nn.Sequential(*layers)
        # slim pools with a fixed 7x7 window, which is global at 224 px;
        # global pooling keeps other image sizes working (slim's global_pool).
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)  # dropout_keep_prob=0.8
        self.logits = conv2d(channels, num_classes, 1, variance_scaling)

    def forward(self, x):
        x = self.dropout(self.pool(self.features(x)))
        return self.logits(x).flatten(1)
