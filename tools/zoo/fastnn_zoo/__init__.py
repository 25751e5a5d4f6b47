"""The FastNN model zoo (TF-slim nets/) defined in PyTorch for ONNX export.

MODELS maps each zoo name to its ModelSpec: how to build it and its TF-slim
defaults (image size, classes, input channels).
"""
from collections import namedtuple
from functools import partial

from .alexnet import AlexNetV2
from .cifarnet import CifarNet
from .inception_resnet_v2 import InceptionResNetV2
from .inception_v1 import InceptionV1
from .inception_v2 import InceptionV2
from .inception_v3 import InceptionV3
from .inception_v4 import InceptionV4
from .lenet import LeNet
from .mobilenet_v1 import MobileNetV1
from .mobilenet_v2 import MobileNetV2
from .nasnet import NASNET_CONFIGS, NASNet
from .overfeat import OverFeat
from .resnet import ResNet
from .vgg import VGG, VGG_BLOCKS

# build(num_classes=, image_size=, in_channels=) -> nn.Module.  Models with
# aux_logits return (logits, aux_logits) in training mode.
ModelSpec = namedtuple(
    "ModelSpec", ["build", "image_size", "num_classes", "channels",
                  "aux_logits"])

MODELS = {
    # lenet takes one channel: the project trains it on Fashion-MNIST.
    "lenet": ModelSpec(LeNet, 28, 10, 1, False),
    "cifarnet": ModelSpec(CifarNet, 32, 10, 3, False),
    "alexnet_v2": ModelSpec(AlexNetV2, 224, 1000, 3, False),
    **{name: ModelSpec(partial(VGG, blocks), 224, 1000, 3, False)
       for name, blocks in VGG_BLOCKS.items()},
    "overfeat": ModelSpec(OverFeat, 231, 1000, 3, False),
    "inception_v1": ModelSpec(InceptionV1, 224, 1000, 3, False),
    "inception_v2": ModelSpec(InceptionV2, 224, 1000, 3, False),
    "inception_v3": ModelSpec(InceptionV3, 299, 1000, 3, True),
    "inception_v4": ModelSpec(InceptionV4, 299, 1000, 3, True),
    "inception_resnet_v2": ModelSpec(InceptionResNetV2, 299, 1000, 3, True),
    **{"resnet_v%d_%d" % (version, layers):
       ModelSpec(partial(ResNet, version, layers), 224, 1000, 3, False)
       for version in (1, 2) for layers in (50, 101, 152, 200)},
    "mobilenet_v1": ModelSpec(MobileNetV1, 224, 1000, 3, False),
    **{"mobilenet_v1_%s" % suffix:
       ModelSpec(partial(MobileNetV1, multiplier), 224, 1000, 3, False)
       for suffix, multiplier in (("075", 0.75), ("050", 0.5),
                                  ("025", 0.25))},
    "mobilenet_v2": ModelSpec(MobileNetV2, 224, 1000, 3, False),
    **{"mobilenet_v2_%s" % suffix:
       ModelSpec(partial(MobileNetV2, multiplier), 224, 1000, 3, False)
       for suffix, multiplier in (("140", 1.4), ("035", 0.35))},
    **{name: ModelSpec(partial(NASNet, config), size, classes, 3, True)
       for name, config, size, classes in (
           ("nasnet_cifar", NASNET_CONFIGS["nasnet_cifar"], 32, 10),
           ("nasnet_mobile", NASNET_CONFIGS["nasnet_mobile"], 224, 1000),
           ("nasnet_large", NASNET_CONFIGS["nasnet_large"], 331, 1000),
           ("pnasnet_mobile", NASNET_CONFIGS["pnasnet_mobile"], 224, 1000),
           ("pnasnet_large", NASNET_CONFIGS["pnasnet_large"], 331, 1000))},
}
