"""AlexNet v2 ("one weird trick") of TF-slim nets/alexnet.py.

slim writes the fully connected layers as convolutions (fc6 is a 5x5 VALID
conv over the 5x5 pool5 map); kept so here.
"""
from torch import nn

from .layers import conv2d, same_padding, trunc_normal, xavier


class AlexNetV2(nn.Module):
    def __init__(self, num_classes=1000, image_size=224, in_channels=3):
        super().__init__()
        relu = nn.ReLU
        # alexnet_v2_arg_scope: xavier weights, 0.1 biases; VALID max pools.
        self.features = nn.Sequential(
            conv2d(in_channels, 64, 11, xavier, stride=4, bias_value=0.1),
            relu(),
            nn.MaxPool2d(3, 2),
            conv2d(64, 192, 5, xavier, padding=same_padding(5),
                   bias_value=0.1),
            relu(),
            nn.MaxPool2d(3, 2),
            conv2d(192, 384, 3, xavier, padding=1, bias_value=0.1),
            relu(),
            conv2d(384, 384, 3, xavier, padding=1, bias_value=0.1),
            relu(),
            conv2d(384, 256, 3, xavier, padding=1, bias_value=0.1),
            relu(),
            nn.MaxPool2d(3, 2),
        )
        fc_init = trunc_normal(0.005)
        self.classifier = nn.Sequential(
            conv2d(256, 4096, 5, fc_init, bias_value=0.1),
            relu(),
            nn.Dropout(0.5),
            conv2d(4096, 4096, 1, fc_init, bias_value=0.1),
            relu(),
            nn.Dropout(0.5),
            conv2d(4096, num_classes, 1, fc_init),
        )

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)
