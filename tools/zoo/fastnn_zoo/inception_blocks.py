"""Pieces the Inception nets share: the Mixed concat and the AuxLogits head
(inception_v4, inception_resnet_v2; NASNet's aux head has the same shape)."""
import torch
from torch import nn

from .layers import linear, valid_size, xavier


class Concat(nn.Module):
    """An Inception 'Mixed' layer: branches concatenated along channels."""

    def __init__(self, *branches):
        super().__init__()
        self.branches = nn.ModuleList(branches)

    def forward(self, x):
        return torch.cat([branch(x) for branch in self.branches], 1)


class AuxLogits(nn.Module):
    """slim's AuxLogits: 5x5/3 VALID average pool, 1x1 conv to 128, a VALID
    conv to 768 over the whole pooled map, fully connected logits.

    conv(in, out, kernel, valid=True) builds the net's conv-BN-ReLU layer;
    fc_init initializes the logits' weights.
    """

    def __init__(self, in_channels, map_size, num_classes, conv,
                 fc_init=xavier):
        super().__init__()
        # VALID, so there is no padding to count; count_include_pad=False
        # keeps the exporter from adding a no-op Pad node.
        self.pool = nn.AvgPool2d(5, 3, count_include_pad=False)
        self.conv_1b = conv(in_channels, 128, 1)
        # slim sizes this VALID conv to the whole pooled map (5x5 at 299 px).
        if map_size < 5:
            raise ValueError("image size too small for the AuxLogits head "
                             "(its input would be %dx%d, it needs 5x5)"
                             % (map_size, map_size))
        pooled = valid_size(map_size, 5, 3)
        self.conv_2a = conv(128, 768, pooled, valid=True)
        self.logits = linear(768, num_classes, fc_init)

    def forward(self, x):
        x = self.conv_2a(self.conv_1b(self.pool(x)))
        return self.logits(x.flatten(1))
