"""VGG of TF-slim nets/vgg.py: vgg_a (configuration A), vgg_16 (D) and
vgg_19 (E), fully connected layers as convs."""
from torch import nn

from .layers import conv2d, xavier

# (number of 3x3 convs, output channels) per block, each followed by a
# 2x2/2 VALID max pool.
VGG_BLOCKS = {
    "vgg_a": [(1, 64), (1, 128), (2, 256), (2, 512), (2, 512)],
    "vgg_16": [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)],
    "vgg_19": [(2, 64), (2, 128), (4, 256), (4, 512), (4, 512)],
}


class VGG(nn.Module):
    def __init__(self, blocks, num_classes=1000, image_size=224,
                 in_channels=3):
        super().__init__()
        # vgg_arg_scope: slim's default xavier weights and zero biases.
        layers = []
        channels = in_channels
        for repeats, width in blocks:
            for _ in range(repeats):
                layers += [conv2d(channels, width, 3, xavier, padding=1),
                           nn.ReLU()]
                channels = width
            layers.append(nn.MaxPool2d(2, 2))
        self.features = nn.Sequential(*layers)
        # fc6 is a 7x7 VALID conv: at 224 px it sees the whole 7x7 map.
        self.classifier = nn.Sequential(
            conv2d(512, 4096, 7, xavier),
            nn.ReLU(),
            nn.Dropout(0.5),
            conv2d(4096, 4096, 1, xavier),
            nn.ReLU(),
            nn.Dropout(0.5),
            conv2d(4096, num_classes, 1, xavier),
        )

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)
