"""Inception v4 of TF-slim nets/inception_v4.py, with its AuxLogits head on
Mixed_6h (create_aux_logits=True) and dropout_keep_prob 0.8."""
from torch import nn

from .inception_blocks import AuxLogits, Concat
from .layers import (ConvBN, avg_pool_same, linear, same_padding, valid_size,
                     variance_scaling, xavier)

# inception_v4_arg_scope (inception_arg_scope): BN decay 0.9997, variance
# scaling conv weights; fully connected layers keep slim's xavier default.
_BN_DECAY = 0.9997


def _conv(in_channels, out_channels, kernel_size, stride=1, valid=False):
    padding = 0 if valid else same_padding(kernel_size)
    return ConvBN(in_channels, out_channels, kernel_size, variance_scaling,
                  _BN_DECAY, stride=stride, padding=padding)


def _chain(*layers):
    return nn.Sequential(*layers)


def block_inception_a():
    """35x35 on 384 channels."""
    return Concat(
        _conv(384, 96, 1),
        _chain(_conv(384, 64, 1), _conv(64, 96, 3)),
        _chain(_conv(384, 64, 1), _conv(64, 96, 3), _conv(96, 96, 3)),
        _chain(avg_pool_same(3), _conv(384, 96, 1)))


def block_reduction_a():
    """35x35x384 -> 17x17x1024."""
    return Concat(
        _conv(384, 384, 3, stride=2, valid=True),
        _chain(_conv(384, 192, 1), _conv(192, 224, 3),
               _conv(224, 256, 3, stride=2, valid=True)),
        nn.MaxPool2d(3, 2))


def block_inception_b():
    """17x17 on 1024 channels."""
    return Concat(
        _conv(1024, 384, 1),
        _chain(_conv(1024, 192, 1), _conv(192, 224, (1, 7)),
               _conv(224, 256, (7, 1))),
        _chain(_conv(1024, 192, 1), _conv(192, 192, (7, 1)),
               _conv(192, 224, (1, 7)), _conv(224, 224, (7, 1)),
               _conv(224, 256, (1, 7))),
        _chain(avg_pool_same(3), _conv(1024, 128, 1)))


def block_reduction_b():
    """17x17x1024 -> 8x8x1536."""
    return Concat(
        _chain(_conv(1024, 192, 1), _conv(192, 192, 3, stride=2, valid=True)),
        _chain(_conv(1024, 256, 1), _conv(256, 256, (1, 7)),
               _conv(256, 320, (7, 1)),
               _conv(320, 320, 3, stride=2, valid=True)),
        nn.MaxPool2d(3, 2))


class _SplitTail(nn.Module):
    """A branch whose last layer is a 1x3 and a 3x1 conv side by side, their
    outputs concatenated (Inception-C's branches 1 and 2)."""

    def __init__(self, head, channels):
        super().__init__()
        self.head = head
        self.tails = Concat(_conv(channels, 256, (1, 3)),
                            _conv(channels, 256, (3, 1)))

    def forward(self, x):
        return self.tails(self.head(x))


def block_inception_c():
    """8x8 on 1536 channels."""
    return Concat(
        _conv(1536, 256, 1),
        _SplitTail(_conv(1536, 384, 1), 384),
        _SplitTail(_chain(_conv(1536, 384, 1), _conv(384, 448, (3, 1)),
                          _conv(448, 512, (1, 3))), 512),
        _chain(avg_pool_same(3), _conv(1536, 256, 1)))


def _mixed_6h_size(image_size):
    """Spatial size of Mixed_6h (17 at 299 px) through the VALID stem."""
    size = valid_size(image_size, 3, 2)   # Conv2d_1a_3x3
    size = valid_size(size, 3)            # Conv2d_2a_3x3
    size = valid_size(size, 3, 2)         # Mixed_3a
    size = valid_size(size, 3)            # Mixed_4a
    size = valid_size(size, 3, 2)         # Mixed_5a
    return valid_size(size, 3, 2)         # Mixed_6a


class InceptionV4(nn.Module):
    def __init__(self, num_classes=1000, image_size=299, in_channels=3):
        super().__init__()
        self.stem = nn.Sequential(
            _conv(in_channels, 32, 3, stride=2, valid=True),  # Conv2d_1a_3x3
            _conv(32, 32, 3, valid=True),                      # Conv2d_2a_3x3
            _conv(32, 64, 3),                                  # Conv2d_2b_3x3
            Concat(nn.MaxPool2d(3, 2),                         # Mixed_3a
                   _conv(64, 96, 3, stride=2, valid=True)),
            Concat(                                            # Mixed_4a
                _chain(_conv(160, 64, 1), _conv(64, 96, 3, valid=True)),
                _chain(_conv(160, 64, 1), _conv(64, 64, (1, 7)),
                       _conv(64, 64, (7, 1)), _conv(64, 96, 3, valid=True))),
            Concat(_conv(192, 192, 3, stride=2, valid=True),   # Mixed_5a
                   nn.MaxPool2d(3, 2)),
            *[block_inception_a() for _ in range(4)],          # Mixed_5b-e
            block_reduction_a(),                               # Mixed_6a
            *[block_inception_b() for _ in range(7)],          # Mixed_6b-h
        )
        self.aux_logits = AuxLogits(1024, _mixed_6h_size(image_size),
                                    num_classes, _conv)
        self.head = nn.Sequential(
            block_reduction_b(),                               # Mixed_7a
            *[block_inception_c() for _ in range(3)],          # Mixed_7b-d
        )
        # AvgPool_1a spans the whole final map: global average pooling.
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)  # dropout_keep_prob=0.8
        self.logits = linear(1536, num_classes, xavier)

    def forward(self, x):
        mixed_6h = self.stem(x)
        aux = self.aux_logits(mixed_6h)
        x = self.dropout(self.pool(self.head(mixed_6h)).flatten(1))
        return self.logits(x), aux
