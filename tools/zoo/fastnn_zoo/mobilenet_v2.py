"""MobileNet v2 of TF-slim nets/mobilenet/mobilenet_v2.py at any
depth_multiplier (mobilenet_v2 1.0, mobilenet_v2_140, mobilenet_v2_035), via
torchvision, which has the same inverted-residual layout (t, c, n, s table,
1280-channel last conv, ReLU6, dropout 0.2 before the logits).

torchvision's width_mult rounds every depth as slim's depth_multiplier does
(_make_divisible by 8, at least 8), and keeps the last conv at 1280 below
width 1, which is slim's finegrain_classification_mode (set by
mobilenet_v2_035).  This subclass sets slim's training_scope choices: BN
decay 0.997 with epsilon 0.001, truncated normal 0.09 weights, and any input
channel count.
"""
from functools import partial

from torch import nn
from torchvision.models import MobileNetV2 as TorchvisionMobileNetV2
from torchvision.ops.misc import Conv2dNormActivation

from .layers import batch_norm, init_layer, trunc_normal

_NORM = partial(batch_norm, decay=0.997)


class MobileNetV2(TorchvisionMobileNetV2):
    def __init__(self, depth_multiplier=1.0, num_classes=1000, image_size=224,
                 in_channels=3):
        super().__init__(num_classes=num_classes, width_mult=depth_multiplier,
                         dropout=0.2, norm_layer=_NORM)
        if in_channels != 3:
            self.features[0] = Conv2dNormActivation(
                in_channels, self.features[0][0].out_channels, stride=2,
                norm_layer=_NORM, activation_layer=nn.ReLU6)
        init = trunc_normal(0.09)
        for module in self.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                init_layer(module, init)
