"""NASNet-A (nasnet_cifar, nasnet_mobile, nasnet_large) and PNASNet-5
(pnasnet_mobile, pnasnet_large) of TF-slim nets/nasnet/nasnet.py,
pnasnet.py and nasnet_utils.py.

One cell class runs slim's NasNetABaseCell for any (operations,
hiddenstate_indices, used_hiddenstates) table: the previous-layer adjustment
(factorized reduction when the sizes differ, ReLU-1x1-BN when the depths
differ), the ReLU-1x1-BN base, five pairwise combinations (stride only on
the two cell inputs), and the concat of the unused states, each brought to
the last state's size and depth first.  Spatial sizes are tracked while
building, as slim reads them off the static shapes.

Drop path is left out (see docs/zoo.md): slim scales its keep probability
by the global step, from 1 at step 0, which a static graph cannot express.
"""
import math
from collections import namedtuple

import torch
from torch import nn
import torch.nn.functional as F

from .inception_blocks import AuxLogits
from .layers import avg_pool_same, batch_norm, init_layer, valid_size

# A cell: 10 operations (left, right of each of 5 combinations), the hidden
# state each reads, and which of the 7 states the output leaves out.
CellSpec = namedtuple("CellSpec", ["operations", "hiddenstate_indices",
                                   "used_hiddenstates"])

NASNET_A_NORMAL = CellSpec(
    ["separable_5x5_2", "separable_3x3_2", "separable_5x5_2",
     "separable_3x3_2", "avg_pool_3x3", "none", "avg_pool_3x3",
     "avg_pool_3x3", "separable_3x3_2", "none"],
    [0, 1, 1, 1, 0, 1, 1, 1, 0, 0],
    [1, 0, 0, 0, 0, 0, 0])
NASNET_A_REDUCTION = CellSpec(
    ["separable_5x5_2", "separable_7x7_2", "max_pool_3x3", "separable_7x7_2",
     "avg_pool_3x3", "separable_5x5_2", "none", "avg_pool_3x3",
     "separable_3x3_2", "max_pool_3x3"],
    [0, 1, 0, 1, 0, 1, 3, 2, 2, 0],
    [1, 1, 1, 0, 0, 0, 0])
PNASNET_5 = CellSpec(
    ["separable_5x5_2", "max_pool_3x3", "separable_7x7_2", "max_pool_3x3",
     "separable_5x5_2", "separable_3x3_2", "separable_3x3_2", "max_pool_3x3",
     "separable_3x3_2", "none"],
    [1, 1, 0, 0, 0, 0, 4, 0, 1, 0],
    [1, 1, 0, 0, 0, 0, 0])

# The hparams of slim's *_config() and the BN settings of its arg_scopes.
NASNetConfig = namedtuple("NASNetConfig", [
    "pnasnet", "stem", "stem_multiplier", "num_cells", "num_conv_filters",
    "dense_dropout_keep_prob", "skip_reduction_layer_input", "bn_decay",
    "bn_epsilon"])

NASNET_CONFIGS = {
    "nasnet_cifar": NASNetConfig(False, "cifar", 3.0, 18, 32, 1.0, False,
                                 0.9, 1e-5),
    "nasnet_mobile": NASNetConfig(False, "imagenet", 1.0, 12, 44, 0.5, False,
                                  0.9997, 1e-3),
    "nasnet_large": NASNetConfig(False, "imagenet", 3.0, 18, 168, 0.5, True,
                                 0.9997, 1e-3),
    "pnasnet_mobile": NASNetConfig(True, "imagenet", 1.0, 9, 54, 0.5, True,
                                   0.9997, 1e-3),
    "pnasnet_large": NASNetConfig(True, "imagenet", 3.0, 12, 216, 0.5, True,
                                  0.9997, 1e-3),
}


def variance_scaling_fan_out(weight, groups=1):
    """variance_scaling_initializer(mode='FAN_OUT'): factor 2, truncated
    normal.  TF's fan out is the receptive field times the outputs per
    input channel group (1 for a depthwise kernel), hence `groups`."""
    receptive_field = weight[0][0].numel()
    fan_out = weight.shape[0] // groups * receptive_field
    stddev = math.sqrt(1.3 * 2.0 / fan_out)
    nn.init.trunc_normal_(weight, 0.0, stddev, -2.0 * stddev, 2.0 * stddev)


def _halved(size):
    """Size after a stride-2 SAME layer (or factorized reduction)."""
    return (size + 1) // 2


class _Layers:
    """Builds slim's layers with one model's BN settings (no conv biases:
    the arg_scope sets biases_initializer=None)."""

    def __init__(self, config):
        self.bn_decay = config.bn_decay
        self.bn_epsilon = config.bn_epsilon

    def bn(self, channels):
        return batch_norm(channels, self.bn_decay, self.bn_epsilon)

    def conv(self, in_channels, out_channels, kernel_size, stride=1,
             padding=0, groups=1):
        conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                         stride=stride, padding=padding, groups=groups,
                         bias=False)
        variance_scaling_fan_out(conv.weight, groups)
        return conv

    def conv_bn(self, in_channels, out_channels, stride=1, relu=True):
        """[ReLU ->] 1x1 conv -> BN."""
        layers = [nn.ReLU()] if relu else []
        return nn.Sequential(*layers,
                             self.conv(in_channels, out_channels, 1, stride),
                             self.bn(out_channels))

    def conv_bn_relu(self, in_channels, out_channels, kernel_size,
                     valid=True):
        """The aux head's VALID conv -> BN -> ReLU."""
        return nn.Sequential(self.conv(in_channels, out_channels, kernel_size),
                             self.bn(out_channels), nn.ReLU())

    def separable(self, in_channels, out_channels, kernel_size, stride):
        """ReLU -> slim.separable_conv2d (depthwise, pointwise) -> BN."""
        return nn.Sequential(
            nn.ReLU(),
            self.conv(in_channels, in_channels, kernel_size, stride,
                      kernel_size // 2, groups=in_channels),
            self.conv(in_channels, out_channels, 1),
            self.bn(out_channels))

    def operation(self, name, in_channels, filters, stride):
        """One of a cell's operations (_apply_conv_operation)."""
        if name.startswith("separable"):
            kernel_size = int(name.split("_")[1].split("x")[0])
            layers = int(name.split("_")[2])
            return nn.Sequential(*[
                self.separable(in_channels if i == 0 else filters, filters,
                               kernel_size, stride if i == 0 else 1)
                for i in range(layers)])
        if name == "none":
            if stride > 1 or in_channels != filters:
                return self.conv_bn(in_channels, filters, stride)
            return nn.Identity()
        kind = name.split("_")[0]
        pool = (avg_pool_same(3, stride) if kind == "avg"
                else nn.MaxPool2d(3, stride, padding=1))
        if in_channels != filters:
            return nn.Sequential(pool, self.conv_bn(in_channels, filters,
                                                    relu=False))
        return pool


class _PadBottomRight(torch.autograd.Function):
    """One zero row at the bottom and column at the right, exported as a
    single ONNX Pad with constant pads.  torch's own F.pad export computes
    the pads at run time (Shape, Gather, ConstantOfShape, Transpose, ...)
    when constant folding is off, as it is for training exports."""

    @staticmethod
    def forward(ctx, x):
        return F.pad(x, (0, 1, 0, 1))

    @staticmethod
    def symbolic(g, x):
        pads = g.op("Constant",
                    value_t=torch.tensor([0, 0, 0, 0, 0, 0, 1, 1]))
        return g.op("Pad", x, pads, mode_s="constant")


def _pad_bottom_right(x):
    # The Function has no backward: use it only while exporting.
    if torch.onnx.is_in_onnx_export():
        return _PadBottomRight.apply(x)
    return F.pad(x, (0, 1, 0, 1))


class FactorizedReduction(nn.Module):
    """nasnet_utils.factorized_reduction: at stride 2, two 1x1 convs on the
    even and on the odd pixels (the input padded bottom/right and shifted),
    concatenated, then BN; at stride 1 a 1x1 conv and BN."""

    def __init__(self, layers, in_channels, out_channels, stride):
        super().__init__()
        self.stride = stride
        if stride == 1:
            self.path = layers.conv_bn(in_channels, out_channels, relu=False)
            return
        self.pool = nn.AvgPool2d(1, stride)
        self.path1 = layers.conv(in_channels, out_channels // 2, 1)
        # An odd depth gives the extra filter to the second path.
        self.path2 = layers.conv(in_channels,
                                 out_channels // 2 + out_channels % 2, 1)
        self.bn = layers.bn(out_channels)

    def forward(self, x):
        if self.stride == 1:
            return self.path(x)
        shifted = _pad_bottom_right(x)[:, :, 1:, 1:]
        return self.bn(torch.cat([self.path1(self.pool(x)),
                                  self.path2(self.pool(shifted))], 1))


class Cell(nn.Module):
    """NasNetABaseCell.__call__ for one CellSpec, filter count and stride.

    `inputs` and `prev` are (channels, size) of the cell's input and of the
    previous layer (None for the first cell after the stem's first layer).
    """

    def __init__(self, layers, spec, filters, stride, inputs, prev):
        super().__init__()
        in_channels, size = inputs
        # _reduce_prev_layer
        self.has_prev = prev is not None
        prev_state = inputs
        self.adjust_prev = nn.Identity()
        if prev is not None:
            prev_channels, prev_size = prev
            prev_state = (prev_channels, prev_size)
            if prev_size != size:
                self.adjust_prev = nn.Sequential(
                    nn.ReLU(), FactorizedReduction(layers, prev_channels,
                                                   filters, 2))
                prev_state = (filters, size)
            elif prev_channels != filters:
                self.adjust_prev = layers.conv_bn(prev_channels, filters)
                prev_state = (filters, size)
        self.base = layers.conv_bn(in_channels, filters)
        states = [(filters, size), prev_state]

        self.combination_inputs = []
        self.lefts, self.rights = nn.ModuleList(), nn.ModuleList()
        for i in range(0, 10, 2):
            pair = spec.hiddenstate_indices[i:i + 2]
            branches = []
            for index, operation in zip(pair, spec.operations[i:i + 2]):
                channels, state_size = states[index]
                # Only the cell's two inputs are strided.
                op_stride = stride if index < 2 else 1
                branches.append(layers.operation(operation, channels, filters,
                                                 op_stride))
                out_size = _halved(state_size) if op_stride > 1 else state_size
            self.combination_inputs.append(pair)
            self.lefts.append(branches[0])
            self.rights.append(branches[1])
            states.append((filters, out_size))

        # _combine_unused_states
        final_channels, final_size = states[-1]
        self.unused = [i for i, used in enumerate(spec.used_hiddenstates)
                       if not used]
        self.reductions = nn.ModuleList()
        for i in self.unused:
            channels, state_size = states[i]
            if channels != final_channels or state_size != final_size:
                self.reductions.append(FactorizedReduction(
                    layers, channels, final_channels,
                    2 if state_size != final_size else 1))
            else:
                self.reductions.append(nn.Identity())
        self.output = (final_channels * len(self.unused), final_size)

    def forward(self, x, prev):
        prev = self.adjust_prev(prev) if self.has_prev else x
        states = [self.base(x), prev]
        for (left_index, right_index), left, right in zip(
                self.combination_inputs, self.lefts, self.rights):
            states.append(left(states[left_index]) + right(states[right_index]))
        return torch.cat([reduce(states[i]) for i, reduce
                          in zip(self.unused, self.reductions)], 1)


def _reduction_layers(num_cells, num_reduction_layers=2):
    """nasnet_utils.calc_reduction_layers."""
    return [int(pool / (num_reduction_layers + 1) * num_cells)
            for pool in range(1, num_reduction_layers + 1)]


class NASNet(nn.Module):
    """_build_nasnet_base / _build_pnasnet_base with the aux head
    (use_aux_head=1) after the cell before the second reduction."""

    def __init__(self, config, num_classes=1000, image_size=224,
                 in_channels=3):
        super().__init__()
        layers = _Layers(config)
        filters = config.num_conv_filters
        normal = PNASNET_5 if config.pnasnet else NASNET_A_NORMAL
        reduction = PNASNET_5 if config.pnasnet else NASNET_A_REDUCTION

        self.cells = nn.ModuleList()
        # Per cell, the indices of its input and previous layer in the list
        # of outputs, which starts as [None, stem conv].
        self.cell_inputs = []
        outputs = [None]

        def add_cell(spec, scaling, stride, prev_index):
            cell = Cell(layers, spec, int(filters * scaling), stride,
                        outputs[-1], outputs[prev_index])
            self.cells.append(cell)
            self.cell_inputs.append((len(outputs) - 1, prev_index))
            outputs.append(cell.output)

        if config.stem == "imagenet":
            stem_channels = int(32 * config.stem_multiplier)
            self.stem = nn.Sequential(
                layers.conv(in_channels, stem_channels, 3, stride=2),
                layers.bn(stem_channels))
            outputs.append((stem_channels, valid_size(image_size, 3, 2)))
            # Two stem cells (reduction cells, or PNASNet's one cell) at
            # filter scaling 1/4 and 1/2.
            for scaling in (0.25, 0.5):
                add_cell(reduction, scaling, 2, len(outputs) - 2)
        else:
            stem_channels = int(filters * config.stem_multiplier)
            self.stem = nn.Sequential(
                layers.conv(in_channels, stem_channels, 3, padding=1),
                layers.bn(stem_channels))
            outputs.append((stem_channels, image_size))

        reductions = _reduction_layers(config.num_cells)
        scaling = 1.0
        self.aux_after = None
        for cell_num in range(config.num_cells):
            is_reduction = cell_num in reductions
            if is_reduction:
                scaling *= 2
            if config.pnasnet:
                # Both PNASNet configs skip the reduction input: the
                # previous layer is always the output before the last.
                add_cell(PNASNET_5, scaling, 2 if is_reduction else 1,
                         len(outputs) - 2)
            else:
                prev_index = len(outputs) - 2
                if is_reduction:
                    add_cell(reduction, scaling, 2, len(outputs) - 2)
                if not config.skip_reduction_layer_input:
                    prev_index = len(outputs) - 2
                add_cell(normal, scaling, 1, prev_index)
            if cell_num == reductions[1] - 1:
                self.aux_after = len(self.cells) - 1
                aux_channels, aux_size = outputs[-1]
        self.aux_logits = AuxLogits(aux_channels, aux_size, num_classes,
                                    layers.conv_bn_relu,
                                    variance_scaling_fan_out)
        channels = outputs[-1][0]
        self.pool = nn.AdaptiveAvgPool2d(1)
        # dense_dropout_keep_prob 1.0 (cifar) is no dropout.
        drop = 1.0 - config.dense_dropout_keep_prob
        self.dropout = nn.Dropout(drop) if drop > 0 else nn.Identity()
        self.logits = init_layer(nn.Linear(channels, num_classes),
                                 variance_scaling_fan_out)

    def forward(self, x):
        outputs = [None, self.stem(x)]
        aux = None
        for index, (cell, (input_index, prev_index)) in enumerate(
                zip(self.cells, self.cell_inputs)):
            outputs.append(cell(outputs[input_index], outputs[prev_index]))
            if index == self.aux_after:
                aux = self.aux_logits(torch.relu(outputs[-1]))
        x = self.pool(torch.relu(outputs[-1])).flatten(1)
        return self.logits(self.dropout(x)), aux
