"""Building blocks shared by the zoo nets, with TF-slim's conventions.

TF-slim builds every layer with an explicit initializer and, under an
arg_scope, optionally batch norm instead of a bias.  These helpers keep those
choices visible at each call site so each net reads like its slim original.

Padding: slim's 'SAME' is written here as symmetric padding k // 2.  For odd
kernels that yields exactly TF's output shapes (ceil(n / stride)) and the same
parameters; for stride 2 on even inputs TF puts the extra pad row at the
bottom/right instead, a one-pixel window shift that does not matter for
training from random weights and keeps the ONNX free of separate Pad nodes.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

# TF-slim's batch_norm defaults (epsilon 0.001); each arg_scope sets its decay.
TF_BN_EPSILON = 0.001


def batch_norm(channels, decay, epsilon=TF_BN_EPSILON):
    """BatchNorm2d with TF's moving-average decay.

    TF updates moving = decay * moving + (1 - decay) * batch, PyTorch weights
    the batch statistic by `momentum`, so momentum = 1 - decay (the exported
    ONNX BatchNormalization then carries momentum = decay again).
    """
    return nn.BatchNorm2d(channels, eps=epsilon, momentum=1.0 - decay)


# --- initializers (slim's weights_initializer choices) -----------------------

def trunc_normal(stddev):
    """tf.truncated_normal_initializer: normal cut at two standard deviations."""
    def init(weight):
        nn.init.trunc_normal_(weight, 0.0, stddev, -2.0 * stddev, 2.0 * stddev)
    return init


def xavier(weight):
    """slim's default weights_initializer (xavier_initializer, uniform)."""
    nn.init.xavier_uniform_(weight)


def variance_scaling(weight):
    """slim.variance_scaling_initializer(): factor 2, FAN_IN, truncated normal.

    slim widens the truncated normal's stddev by sqrt(1.3) so the variance
    after truncation is about 2 / fan_in.
    """
    fan_in = weight[0].numel()
    stddev = math.sqrt(1.3 * 2.0 / fan_in)
    nn.init.trunc_normal_(weight, 0.0, stddev, -2.0 * stddev, 2.0 * stddev)


def init_layer(layer, weight_init, bias_value=0.0):
    """Applies a slim-style initializer to a Conv2d/Linear in place."""
    weight_init(layer.weight)
    if layer.bias is not None:
        nn.init.constant_(layer.bias, bias_value)
    return layer


def same_padding(kernel_size):
    """Symmetric padding equivalent to TF 'SAME' for odd kernels."""
    if isinstance(kernel_size, int):
        return kernel_size // 2
    return tuple(k // 2 for k in kernel_size)


def conv2d(in_channels, out_channels, kernel_size, weight_init, stride=1,
           padding=0, bias_value=0.0, groups=1):
    """A biased convolution: slim.conv2d with normalizer_fn=None."""
    layer = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                      padding=padding, groups=groups, bias=True)
    return init_layer(layer, weight_init, bias_value)


def linear(in_features, out_features, weight_init, bias_value=0.0):
    """slim.fully_connected without a normalizer."""
    return init_layer(nn.Linear(in_features, out_features), weight_init,
                      bias_value)


class ConvBN(nn.Module):
    """slim.conv2d under a batch-norm arg_scope: conv (no bias) -> BN -> act.

    slim drops the conv bias whenever a normalizer is set, since BN's beta
    takes its place.  `activation` is a module (ReLU, ReLU6) or None.
    """

    def __init__(self, in_channels, out_channels, kernel_size, weight_init,
                 bn_decay, bn_epsilon=TF_BN_EPSILON, stride=1, padding=0,
                 groups=1, activation=nn.ReLU):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              stride=stride, padding=padding, groups=groups,
                              bias=False)
        weight_init(self.conv.weight)
        self.bn = batch_norm(out_channels, bn_decay, bn_epsilon)
        self.act = activation() if activation is not None else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        return self.act(x) if self.act is not None else x


def avg_pool_same(kernel_size, stride=1):
    """slim.avg_pool2d(padding='SAME'): TF averages over valid pixels only."""
    return nn.AvgPool2d(kernel_size, stride=stride,
                        padding=same_padding(kernel_size),
                        count_include_pad=False)


def valid_size(size, kernel_size, stride=1):
    """Spatial size after a 'VALID' window, as TF computes it."""
    return (size - kernel_size) // stride + 1


class TFLocalResponseNorm(torch.autograd.Function):
    """tf.nn.lrn exported as one ONNX LRN node with TF's semantics.

    TF: y = x / (bias + alpha * sum_{|j-c| <= depth_radius} x_j^2) ** beta.
    ONNX LRN (and torch): y = x / (bias + alpha / size * sum over size) ** beta
    with a window of `size` channels.  So size = 2 * depth_radius + 1 and the
    ONNX alpha is TF's alpha * size.  torch.nn.LocalResponseNorm is written
    in Python (pad + avg_pool3d) and would trace into a dozen nodes, hence
    this Function with an explicit ONNX symbolic.
    """

    @staticmethod
    def forward(ctx, x, size, alpha, beta, bias):
        return F.local_response_norm(x, size, alpha, beta, bias)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, bias):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta,
                    bias_f=bias)


class LRN(nn.Module):
    """tf.nn.lrn(x, depth_radius, bias, alpha, beta) on NCHW tensors."""

    def __init__(self, depth_radius, bias, alpha, beta):
        super().__init__()
        self.size = 2 * depth_radius + 1
        self.alpha = alpha * self.size
        self.beta = beta
        self.bias = bias

    def forward(self, x):
        # The Function has no backward: use it only while exporting, so the
        # module stays trainable in PyTorch.
        if torch.onnx.is_in_onnx_export():
            return TFLocalResponseNorm.apply(x, self.size, self.alpha,
                                             self.beta, self.bias)
        return F.local_response_norm(x, self.size, self.alpha, self.beta,
                                     self.bias)
