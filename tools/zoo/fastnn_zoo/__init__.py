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
from .inception_v3 import InceptionV3
from .lenet import LeNet
from .mobilenet_v1 import MobileNetV1
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50
from .vgg import VGG16

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
    "vgg_16": ModelSpec(VGG16, 224, 1000, 3, False),
    "inception_v1": ModelSpec(InceptionV1, 224, 1000, 3, False),
    "inception_v3": ModelSpec(InceptionV3, 299, 1000, 3, True),
    "inception_resnet_v2": ModelSpec(InceptionResNetV2, 299, 1000, 3, True),
    "resnet_v1_50": ModelSpec(partial(ResNet50, 1), 224, 1000, 3, False),
    "resnet_v2_50": ModelSpec(partial(ResNet50, 2), 224, 1000, 3, False),
    "mobilenet_v1": ModelSpec(MobileNetV1, 224, 1000, 3, False),
    "mobilenet_v2": ModelSpec(MobileNetV2, 224, 1000, 3, False),
}
