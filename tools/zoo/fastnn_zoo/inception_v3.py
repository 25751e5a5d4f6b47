"""Inception v3 of TF-slim nets/inception_v3.py, via torchvision.

torchvision's Inception3 is a port of slim's network (same Mixed blocks,
VALID stem, AuxLogits head on Mixed_6e, BN epsilon 0.001); this subclass
sets slim's remaining choices: dropout_keep_prob 0.8, BN decay 0.9997, slim's
initializers, any input channel count, and an aux conv that shrinks for
small inputs like slim's _reduced_kernel_size_for_small_input.  Differences
left as they are: torchvision's stride-1 3x3 average pools in the Mixed
blocks count padded pixels (slim's SAME pools do not), and the logits are a
Linear layer where slim uses an equivalent 1x1 conv.
"""
from torch import nn
from torchvision.models.inception import BasicConv2d, Inception3

from .layers import init_layer, trunc_normal, valid_size, variance_scaling

_BN_DECAY = 0.9997


def _mixed_6e_size(image_size):
    """Spatial size of Mixed_6e (17 at 299 px) through the VALID stem."""
    size = valid_size(image_size, 3, 2)   # Conv2d_1a_3x3
    size = valid_size(size, 3)            # Conv2d_2a_3x3 (2b is SAME)
    size = valid_size(size, 3, 2)         # MaxPool_3a_3x3
    size = valid_size(size, 3)            # Conv2d_4a_3x3 (3b is 1x1)
    size = valid_size(size, 3, 2)         # MaxPool_5a_3x3
    return valid_size(size, 3, 2)         # Mixed_6a


class InceptionV3(Inception3):
    def __init__(self, num_classes=1000, image_size=299, in_channels=3):
        super().__init__(num_classes=num_classes, aux_logits=True,
                         transform_input=False, init_weights=False,
                         dropout=0.2)
        if in_channels != 3:
            self.Conv2d_1a_3x3 = BasicConv2d(in_channels, 32, kernel_size=3,
                                             stride=2)
        aux_size = _mixed_6e_size(image_size)
        if aux_size < 5:
            raise ValueError("image size too small for the AuxLogits head "
                             "(its input would be %dx%d, it needs 5x5; use "
                             ">= 107 px)" % (aux_size, aux_size))
        aux_kernel = min(5, valid_size(aux_size, 5, 3))
        if aux_kernel != 5:
            self.AuxLogits.conv1 = BasicConv2d(128, 768,
                                               kernel_size=aux_kernel)
        for module in self.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.momentum = 1.0 - _BN_DECAY
            elif isinstance(module, (nn.Conv2d, nn.Linear)):
                init_layer(module, variance_scaling)
        # slim's AuxLogits: Conv2d_2a_5x5 ~ N(0, 0.01), logits ~ N(0, 0.001).
        init_layer(self.AuxLogits.conv1.conv, trunc_normal(0.01))
        init_layer(self.AuxLogits.fc, trunc_normal(0.001))

    def forward(self, x):
        # (logits, aux_logits) in training mode; aux_logits is None in eval.
        return self._forward(x)
