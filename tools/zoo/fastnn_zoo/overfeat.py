"""OverFeat (fast model) of TF-slim nets/overfeat.py, fully connected layers
as convs; classifies 231x231 inputs (fc6 is a 6x6 VALID conv)."""
from torch import nn

from .layers import conv2d, trunc_normal, xavier


class OverFeat(nn.Module):
    def __init__(self, num_classes=1000, image_size=231, in_channels=3):
        super().__init__()
        relu = nn.ReLU
        # overfeat_arg_scope: slim's default xavier weights, zero biases,
        # SAME convs unless VALID is given, VALID 2x2/2 max pools.
        self.features = nn.Sequential(
            conv2d(in_channels, 64, 11, xavier, stride=4),
            relu(),
            nn.MaxPool2d(2, 2),
            conv2d(64, 256, 5, xavier),
            relu(),
            nn.MaxPool2d(2, 2),
            conv2d(256, 512, 3, xavier, padding=1),
            relu(),
            conv2d(512, 1024, 3, xavier, padding=1),
            relu(),
            conv2d(1024, 1024, 3, xavier, padding=1),
            relu(),
            nn.MaxPool2d(2, 2),
        )
        # fc6-fc7: truncated normal 0.005 weights, 0.1 biases; fc8 zero bias.
        fc_init = trunc_normal(0.005)
        self.classifier = nn.Sequential(
            conv2d(1024, 3072, 6, fc_init, bias_value=0.1),
            relu(),
            nn.Dropout(0.5),
            conv2d(3072, 4096, 1, fc_init, bias_value=0.1),
            relu(),
            nn.Dropout(0.5),
            conv2d(4096, num_classes, 1, fc_init),
        )

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)
