"""Inception-ResNet v2 of TF-slim nets/inception_resnet_v2.py.

Default slim configuration: output_stride 16, align_feature_maps False
(VALID stem), auxiliary logits head on PreAuxLogits (the output of the 20
Block17 units), dropout_keep_prob 0.8.  slim's arg_scope sets no weights
initializer, so weights use its default, xavier.
"""
import torch
from torch import nn

from .inception_blocks import AuxLogits, Concat
from .layers import (ConvBN, avg_pool_same, conv2d, linear, same_padding,
                     valid_size, xavier)

# inception_resnet_v2_arg_scope batch norm.
_BN_DECAY = 0.9997


def _conv(in_channels, out_channels, kernel_size, stride=1, valid=False):
    padding = 0 if valid else same_padding(kernel_size)
    return ConvBN(in_channels, out_channels, kernel_size, xavier, _BN_DECAY,
                  stride=stride, padding=padding)


def _chain(*convs):
    return nn.Sequential(*convs)


class _ResidualBlock(nn.Module):
    """Shared shape of block35/block17/block8: concat the branches, project
    back with a biased 1x1 conv (no BN, no activation), add scaled."""

    def __init__(self, branches, mixed_channels, channels, scale, activate):
        super().__init__()
        self.branches = nn.ModuleList(branches)
        self.up = conv2d(mixed_channels, channels, 1, xavier)
        self.scale = scale
        self.relu = nn.ReLU() if activate else None

    def forward(self, x):
        up = self.up(torch.cat([branch(x) for branch in self.branches], 1))
        # slim computes net += scale * up; the final Block8 uses scale 1.0,
        # where the multiply is left out.
        x = x + (up * self.scale if self.scale != 1.0 else up)
        return self.relu(x) if self.relu is not None else x


def block35(scale):
    """35x35 resnet block on 320 channels."""
    return _ResidualBlock([
        _conv(320, 32, 1),
        _chain(_conv(320, 32, 1), _conv(32, 32, 3)),
        _chain(_conv(320, 32, 1), _conv(32, 48, 3), _conv(48, 64, 3)),
    ], 32 + 32 + 64, 320, scale, activate=True)


def block17(scale):
    """17x17 resnet block on 1088 channels."""
    return _ResidualBlock([
        _conv(1088, 192, 1),
        _chain(_conv(1088, 128, 1), _conv(128, 160, (1, 7)),
               _conv(160, 192, (7, 1))),
    ], 192 + 192, 1088, scale, activate=True)


def block8(scale, activate=True):
    """8x8 resnet block on 2080 channels."""
    return _ResidualBlock([
        _conv(2080, 192, 1),
        _chain(_conv(2080, 192, 1), _conv(192, 224, (1, 3)),
               _conv(224, 256, (3, 1))),
    ], 192 + 256, 2080, scale, activate)


class InceptionResNetV2(nn.Module):
    def __init__(self, num_classes=1000, image_size=299, in_channels=3):
        super().__init__()
        self.stem = nn.Sequential(
            _conv(in_channels, 32, 3, stride=2, valid=True),  # Conv2d_1a_3x3
            _conv(32, 32, 3, valid=True),                      # Conv2d_2a_3x3
            _conv(32, 64, 3),                                  # Conv2d_2b_3x3
            nn.MaxPool2d(3, 2),                                # MaxPool_3a_3x3
            _conv(64, 80, 1, valid=True),                      # Conv2d_3b_1x1
            _conv(80, 192, 3, valid=True),                     # Conv2d_4a_3x3
            nn.MaxPool2d(3, 2),                                # MaxPool_5a_3x3
            Concat(                                           # Mixed_5b
                _conv(192, 96, 1),
                _chain(_conv(192, 48, 1), _conv(48, 64, 5)),
                _chain(_conv(192, 64, 1), _conv(64, 96, 3),
                       _conv(96, 96, 3)),
                _chain(avg_pool_same(3), _conv(192, 64, 1))),
            *[block35(0.17) for _ in range(10)],
            Concat(                                           # Mixed_6a
                _conv(320, 384, 3, stride=2, valid=True),
                _chain(_conv(320, 256, 1), _conv(256, 256, 3),
                       _conv(256, 384, 3, stride=2, valid=True)),
                nn.MaxPool2d(3, 2)),
            *[block17(0.10) for _ in range(20)],
        )
        self.aux_logits = AuxLogits(1088, self._pre_aux_size(image_size),
                                    num_classes, _conv)
        self.head = nn.Sequential(
            Concat(                                           # Mixed_7a
                _chain(_conv(1088, 256, 1),
                       _conv(256, 384, 3, stride=2, valid=True)),
                _chain(_conv(1088, 256, 1),
                       _conv(256, 288, 3, stride=2, valid=True)),
                _chain(_conv(1088, 256, 1), _conv(256, 288, 3),
                       _conv(288, 320, 3, stride=2, valid=True)),
                nn.MaxPool2d(3, 2)),
            *[block8(0.20) for _ in range(9)],
            block8(1.0, activate=False),
            _conv(2080, 1536, 1),                              # Conv2d_7b_1x1
        )
        # AvgPool_1a_8x8 spans the whole final map: global average pooling.
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)  # dropout_keep_prob=0.8
        self.logits = linear(1536, num_classes, xavier)

    @staticmethod
    def _pre_aux_size(image_size):
        """Spatial size of PreAuxLogits (17 at 299 px) through the VALID stem."""
        size = valid_size(image_size, 3, 2)   # Conv2d_1a_3x3
        size = valid_size(size, 3)            # Conv2d_2a_3x3
        size = valid_size(size, 3, 2)         # MaxPool_3a_3x3
        size = valid_size(size, 3)            # Conv2d_4a_3x3
        size = valid_size(size, 3, 2)         # MaxPool_5a_3x3
        return valid_size(size, 3, 2)         # Mixed_6a

    def forward(self, x):
        pre_aux = self.stem(x)
        aux = self.aux_logits(pre_aux)
        x = self.dropout(self.pool(self.head(pre_aux)).flatten(1))
        return self.logits(x), aux
