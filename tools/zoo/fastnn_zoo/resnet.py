"""ResNet v1 and v2 (50/101/152/200) of TF-slim nets/resnet_v1.py, resnet_v2.py.

Follows slim's block layout rather than torchvision's: each block subsamples
in its *last* unit (stride on that unit's 3x3 conv), and a unit whose depth
does not change uses a 1x1/stride max pool as shortcut (resnet_utils
.subsample).  Parameter shapes equal torchvision's resnets of the same depth;
the feature maps in the first units of blocks 2-4 are larger, as in slim.
"""
from torch import nn

from .layers import ConvBN, batch_norm, conv2d, variance_scaling

# resnet_arg_scope: BN decay 0.997, epsilon 1e-5, with gamma; He init.
_BN_DECAY = 0.997
_BN_EPSILON = 1e-5

# resnet_v*_<num_layers> blocks (the same for v1 and v2): (bottleneck depth,
# units, stride of the last unit).
RESNET_BLOCKS = {
    50: [(64, 3, 2), (128, 4, 2), (256, 6, 2), (512, 3, 1)],
    101: [(64, 3, 2), (128, 4, 2), (256, 23, 2), (512, 3, 1)],
    152: [(64, 3, 2), (128, 8, 2), (256, 36, 2), (512, 3, 1)],
    200: [(64, 3, 2), (128, 24, 2), (256, 36, 2), (512, 3, 1)],
}


def _conv_bn(in_channels, out_channels, kernel_size, stride=1,
             activation=nn.ReLU):
    # slim's conv2d_same pads (k - 1) // 2 on both sides for stride 2 too.
    return ConvBN(in_channels, out_channels, kernel_size, variance_scaling,
                  _BN_DECAY, _BN_EPSILON, stride=stride,
                  padding=kernel_size // 2, activation=activation)


def _subsample(stride):
    """resnet_utils.subsample: a 1x1 max pool with the unit's stride."""
    return nn.MaxPool2d(1, stride) if stride > 1 else nn.Identity()


class BottleneckV1(nn.Module):
    """resnet_v1.bottleneck: conv-BN-ReLU x3, ReLU after the sum."""

    def __init__(self, in_channels, depth, depth_bottleneck, stride):
        super().__init__()
        if depth == in_channels:
            self.shortcut = _subsample(stride)
        else:
            self.shortcut = _conv_bn(in_channels, depth, 1, stride,
                                     activation=None)
        self.conv1 = _conv_bn(in_channels, depth_bottleneck, 1)
        self.conv2 = _conv_bn(depth_bottleneck, depth_bottleneck, 3, stride)
        self.conv3 = _conv_bn(depth_bottleneck, depth, 1, activation=None)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = self.conv3(self.conv2(self.conv1(x)))
        return self.relu(self.shortcut(x) + residual)


class BottleneckV2(nn.Module):
    """resnet_v2.bottleneck: full pre-activation; the projection shortcut
    and conv3 have biases and no BN (normalizer_fn=None)."""

    def __init__(self, in_channels, depth, depth_bottleneck, stride):
        super().__init__()
        self.preact = nn.Sequential(batch_norm(in_channels, _BN_DECAY,
                                               _BN_EPSILON), nn.ReLU())
        # The identity shortcut takes the raw input, the projection the
        # pre-activated one (as in slim).
        self.projection = depth != in_channels
        if self.projection:
            self.shortcut = conv2d(in_channels, depth, 1, variance_scaling,
                                   stride=stride)
        else:
            self.shortcut = _subsample(stride)
        self.conv1 = _conv_bn(in_channels, depth_bottleneck, 1)
        self.conv2 = _conv_bn(depth_bottleneck, depth_bottleneck, 3, stride)
        self.conv3 = conv2d(depth_bottleneck, depth, 1, variance_scaling)

    def forward(self, x):
        preact = self.preact(x)
        shortcut = self.shortcut(preact if self.projection else x)
        return shortcut + self.conv3(self.conv2(self.conv1(preact)))


class ResNet(nn.Module):
    def __init__(self, version, num_layers, num_classes=1000, image_size=224,
                 in_channels=3):
        super().__init__()
        if version == 1:
            unit = BottleneckV1
            root = _conv_bn(in_channels, 64, 7, stride=2)
        else:
            unit = BottleneckV2
            # v2's conv1 has neither BN nor activation: the first unit's
            # preactivation provides them.
            root = conv2d(in_channels, 64, 7, variance_scaling, stride=2,
                          padding=3)
        layers = [root, nn.MaxPool2d(3, 2, padding=1)]  # pool1 is SAME
        channels = 64
        for depth_bottleneck, units, stride in RESNET_BLOCKS[num_layers]:
            for i in range(units):
                layers.append(unit(channels, 4 * depth_bottleneck,
                                   depth_bottleneck,
                                   stride if i == units - 1 else 1))
                channels = 4 * depth_bottleneck
        if version == 2:
            # 'postnorm': the last unit's sum is not normalised otherwise.
            layers += [batch_norm(channels, _BN_DECAY, _BN_EPSILON),
                       nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)  # reduce_mean over H, W
        self.logits = conv2d(channels, num_classes, 1, variance_scaling)

    def forward(self, x):
        return self.logits(self.pool(self.features(x))).flatten(1)
