"""CifarNet of TF-slim nets/cifarnet.py, LRN layers included."""
from torch import nn

from .layers import LRN, conv2d, linear, same_padding, trunc_normal


def _tf_lrn():
    # tf.nn.lrn(net, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    return LRN(depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)


class CifarNet(nn.Module):
    def __init__(self, num_classes=10, image_size=32, in_channels=3):
        super().__init__()
        conv_init = trunc_normal(5e-2)
        fc_init = trunc_normal(0.04)
        self.conv1 = conv2d(in_channels, 64, 5, conv_init,
                            padding=same_padding(5))
        self.pool1 = nn.MaxPool2d(2, 2)
        self.norm1 = _tf_lrn()
        self.conv2 = conv2d(64, 64, 5, conv_init, padding=same_padding(5))
        self.norm2 = _tf_lrn()
        self.pool2 = nn.MaxPool2d(2, 2)
        flat = 64 * (image_size // 4) ** 2
        # cifarnet_arg_scope gives fully connected layers 0.1 biases.
        self.fc3 = linear(flat, 384, fc_init, bias_value=0.1)
        self.dropout3 = nn.Dropout(0.5)
        self.fc4 = linear(384, 192, fc_init, bias_value=0.1)
        self.logits = linear(192, num_classes, trunc_normal(1 / 192.0))
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.norm1(self.pool1(self.relu(self.conv1(x))))
        x = self.pool2(self.norm2(self.relu(self.conv2(x))))
        x = self.dropout3(self.relu(self.fc3(x.flatten(1))))
        x = self.relu(self.fc4(x))
        return self.logits(x)
