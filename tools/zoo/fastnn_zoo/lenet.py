"""LeNet variant of TF-slim nets/lenet.py (Fashion-MNIST / MNIST sized)."""
from torch import nn

from .layers import conv2d, linear, same_padding, trunc_normal


class LeNet(nn.Module):
    def __init__(self, num_classes=10, image_size=28, in_channels=1):
        super().__init__()
        # lenet_arg_scope: truncated normal 0.1 for every weight, zero biases.
        init = trunc_normal(0.1)
        self.conv1 = conv2d(in_channels, 32, 5, init, padding=same_padding(5))
        self.pool1 = nn.MaxPool2d(2, 2)
        self.conv2 = conv2d(32, 64, 5, init, padding=same_padding(5))
        self.pool2 = nn.MaxPool2d(2, 2)
        flat = 64 * (image_size // 4) ** 2
        self.fc3 = linear(flat, 1024, init)
        self.dropout3 = nn.Dropout(0.5)
        self.fc4 = linear(1024, num_classes, init)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.pool1(self.relu(self.conv1(x)))
        x = self.pool2(self.relu(self.conv2(x)))
        x = self.relu(self.fc3(x.flatten(1)))
        return self.fc4(self.dropout3(x))
