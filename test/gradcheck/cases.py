"""Cases of the gradient checks (check_gradients.py), by group.

Rules of dialects/lib/Dialect/FastNN/IR/FastNNGradients.cpp checked by
finite differences, with the ONNX ops that reach them:

  conv2d (Conv)                  stride 2, asymmetric pads, dilation 2, groups,
                                 depthwise, bias or none, 1x1 stride 2
                                 (skipped inputs), SAME_UPPER with an even
                                 kernel
  max_pool2d (MaxPool)           overlapping (stride < kernel) with padding,
                                 asymmetric pads with ceil_mode, dilation
  avg_pool2d (AveragePool)       padding with count_include_pad 0 and 1,
                                 ceil_mode
  batch_norm_train               BatchNormalization, 4-D and 2-D (the
                                 training step always uses batch statistics)
  reduce_mean sub mul sqrt reciprocal add
                                 LayerNormalization (last axis; axis 1 with
                                 Mean and InvStdDev read too),
                                 GroupNormalization 21 (per channel),
                                 InstanceNormalization
  lrn (LRN)                      sizes 3 and 5 (the kernels take odd sizes
                                 only), alpha large enough that the
                                 cross-channel term matters
  matmul (Gemm, MatMul)          all four transpose cases, alpha, beta, bias
                                 broadcast from [N], [M, 1], [1, N]; 1-D MatMul;
                                 batched MatMul, with batch dimensions
                                 broadcast both ways, attention's q k^T and
                                 scores v, a vector times a stack; Einsum
                                 (attention's two contractions, an
                                 ellipsis, a label summed in one operand);
                                 3-D times 2-D MatMul (imported as a 2-D
                                 product between reshapes)
  add sub mul div                with broadcasting on either side; a value
                                 read twice (gradient accumulation); Sum, Mean
  pow reciprocal                 Pow (base and exponent), Reciprocal
  relu leaky_relu clip sigmoid tanh exp log sqrt neg abs erf
                                 HardSigmoid (default and given alpha,
                                 beta) and HardSwish, imported as mul, add,
                                 clip and mul; Elu, Selu, PRelu (relu, neg,
                                 exp, mul), Gelu exact and tanh (erf or tanh,
                                 mul, add), Mish (softplus, tanh, mul)
  sin cos softplus               Sin, Cos, Softplus
  floor ceil round               x + Floor(x), Ceil, Round (gradient zero),
                                 inputs away from the jumps
  select                         Where with broadcasting, and of a Greater
                                 (equal, less, greater, and, not have
                                 boolean results and no gradient)
  mod                            Mod with fmod 1 and broadcasting, a / b away
                                 from integers
  softmax log_softmax            along inner and outer axes
  dropout_train                  Dropout (ratio 0.3; one mask per step)
  cast                           Cast to float64 and back around a float64
                                 tanh (a bare pair folds away)
  reduce_mean reduce_sum         ReduceMean, ReduceSum, GlobalAveragePool,
                                 ReduceL2, ReduceLogSumExp (axes as
                                 attribute and as input 1):
                                 axes, negative axes, all axes, keepdims 0/1
  reduce_max reduce_min          ReduceMax, ReduceMin, GlobalMaxPool (inputs
                                 distinct by 0.03), and tied maxima sharing
                                 the gradient
  concat reshape transpose pad slice broadcast
                                 Concat, Reshape, Flatten, Squeeze, Unsqueeze,
                                 Identity, Transpose, Pad (constant), Slice
                                 (negative starts, several axes, steps 1,
                                 2, -2 and 3), Gather (constant indices,
                                 repeated and negative; axis 0, a middle
                                 and the last axis; a scalar index),
                                 ScatterND (reduction none and add: a
                                 matmul with a 0/1 matrix, a select),
                                 Expand and Tile (broadcast between
                                 reshapes), Split (sizes; num_outputs,
                                 uneven), Range and ConstantOfShape
                                 (constants); Trilu (select with a mask);
                                 Resize nearest (a broadcast for an integer
                                 factor, else a matmul with a 0/1 matrix)
                                 linear and cubic (matmuls with
                                 interpolation matrices; antialias and
                                 exclude_outside), scales and sizes, axes
                                 (18);
                                 Flatten, Squeeze and Unsqueeze import as
                                 reshape, Identity of a computed value as
                                 nothing

Not differentiated, each checked for a clear error at the ONNX node: max, min
(Max, Min), reflect and edge pad.

Rules no training step reaches, so not checked here: batch_norm and dropout
(fastnn-build-train-step replaces them by their training forms), sign (only
the abs rule creates it, and nothing differentiates the backward pass).

Inputs sit away from kinks by more than the perturbation (|h v| <= 0.01):
relu, leaky_relu and abs inputs at |x| >= 0.05, clip inputs 0.05 from both
bounds (HardSigmoid's and HardSwish's from the x where alpha x + beta is 0
or 1), max-pool inputs distinct by 0.03 or more so no window's argmax moves,
log, sqrt, div and reciprocal inputs with |x| >= 0.5.
"""
from dataclasses import dataclass, field

import numpy as np
from onnx import helper, numpy_helper


@dataclass
class Case:
    # Trainable inputs of the op (name -> float32 value at the check point).
    inputs: dict
    # ONNX nodes reading the inputs by name; the last one writes "y".
    nodes: list
    # Initializers read as constants (shapes, axes) or statistics.
    constants: list = field(default_factory=list)
    opset: int = 13
    # y's shape, for ops whose output onnx's shape inference does not know.
    output_shape: tuple = None
    # For ops that are not differentiated: text the error must contain.
    expect_error: str = None
    name: str = ""


GROUPS = {}


def case(group):
    """Registers a case builder (rng -> Case) under `group`; the case is named
    after the function."""
    def register(builder):
        def build(rng):
            result = builder(rng)
            result.name = builder.__name__
            return result
        build.__name__ = builder.__name__
        GROUPS.setdefault(group, []).append(build)
        return builder
    return register


def node(op_type, inputs, **attrs):
    return helper.make_node(op_type, inputs, ["y"], **attrs)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(values, dtype), name)


def smooth(r, *shape, lo=-1.0, hi=1.0):
    return r.uniform(lo, hi, shape).astype(np.float32)


def away(r, *shape, kinks=(0.0,), lo=-1.0, hi=1.0, margin=0.05):
    """Uniform values at least `margin` from every kink."""
    x = r.uniform(lo, hi, shape)
    while True:
        near = np.zeros(shape, bool)
        for k in kinks:
            near |= np.abs(x - k) < margin
        if not near.any():
            return x.astype(np.float32)
        x[near] = r.uniform(lo, hi, int(near.sum()))


def magnitude(r, *shape, lo=0.5, hi=1.5):
    """Values with lo <= |x| <= hi and random signs."""
    return (r.uniform(lo, hi, shape) * r.choice([-1, 1], shape)).astype(
        np.float32)


def distinct(r, *shape, spacing=0.03):
    """Values pairwise at least `spacing` apart, centred on 0."""
    n = int(np.prod(shape))
    return ((r.permutation(n) - n / 2) * spacing).reshape(shape).astype(
        np.float32)


def size(r, lo, hi):
    return int(r.randint(lo, hi + 1))


# ---------------------------------------------------------------------------
# Convolution


@case("conv")
def conv_strided_padded_dilated_grouped(r):
    h, w = size(r, 8, 11), size(r, 8, 11)
    return Case({"x": smooth(r, 2, 4, h, w), "w": smooth(r, 6, 2, 3, 3),
                 "b": smooth(r, 6)},
                [node("Conv", ["x", "w", "b"], strides=[2, 2],
                      pads=[1, 0, 2, 1], dilations=[2, 2], group=2)])


@case("conv")
def conv_depthwise(r):
    h, w = size(r, 5, 8), size(r, 5, 8)
    return Case({"x": smooth(r, 2, 3, h, w), "w": smooth(r, 6, 1, 3, 3),
                 "b": smooth(r, 6)},
                [node("Conv", ["x", "w", "b"], pads=[1, 1, 1, 1], group=3)])


@case("conv")
def conv_1x1_stride2_no_bias(r):
    h, w = 2 * size(r, 2, 4) + 1, 2 * size(r, 2, 4) + 1
    return Case({"x": smooth(r, 2, 3, h, w), "w": smooth(r, 4, 3, 1, 1)},
                [node("Conv", ["x", "w"], strides=[2, 2])])


@case("conv")
def conv_rectangular_mixed_strides(r):
    h, w = size(r, 6, 9), size(r, 7, 10)
    return Case({"x": smooth(r, 1, 3, h, w), "w": smooth(r, 5, 3, 2, 3),
                 "b": smooth(r, 5)},
                [node("Conv", ["x", "w", "b"], strides=[1, 3],
                      pads=[0, 2, 1, 0], dilations=[1, 2])])


@case("conv")
def conv_same_upper_even_kernel(r):
    h, w = size(r, 5, 8), size(r, 5, 8)
    return Case({"x": smooth(r, 2, 2, h, w), "w": smooth(r, 3, 2, 4, 4),
                 "b": smooth(r, 3)},
                [node("Conv", ["x", "w", "b"], strides=[2, 2],
                      auto_pad="SAME_UPPER")])


# ---------------------------------------------------------------------------
# Pooling


@case("pool")
def max_pool_overlapping_padded(r):
    h, w = size(r, 6, 9), size(r, 6, 9)
    return Case({"x": distinct(r, 2, 3, h, w)},
                [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1])])


@case("pool")
def max_pool_asymmetric_ceil(r):
    h, w = size(r, 6, 9), size(r, 6, 9)
    return Case({"x": distinct(r, 2, 2, h, w)},
                [node("MaxPool", ["x"], kernel_shape=[2, 3], strides=[2, 2],
                      pads=[0, 1, 1, 0], ceil_mode=1)])


@case("pool")
def max_pool_dilated(r):
    h, w = size(r, 6, 9), size(r, 6, 9)
    return Case({"x": distinct(r, 1, 3, h, w)},
                [node("MaxPool", ["x"], kernel_shape=[2, 2], strides=[1, 2],
                      dilations=[2, 1], pads=[1, 0, 0, 1])], opset=13)


@case("pool")
def avg_pool_padded_count_include_pad_0(r):
    h, w = size(r, 6, 9), size(r, 6, 9)
    return Case({"x": smooth(r, 2, 3, h, w)},
                [node("AveragePool", ["x"], kernel_shape=[3, 3],
                      strides=[2, 2], pads=[1, 0, 1, 2],
                      count_include_pad=0)])


@case("pool")
def avg_pool_padded_count_include_pad_1(r):
    h, w = size(r, 6, 9), size(r, 6, 9)
    return Case({"x": smooth(r, 2, 3, h, w)},
                [node("AveragePool", ["x"], kernel_shape=[3, 3],
                      strides=[2, 2], pads=[1, 0, 1, 2],
                      count_include_pad=1)])


@case("pool")
def avg_pool_ceil(r):
    h, w = 2 * size(r, 3, 4), 2 * size(r, 3, 4)
    return Case({"x": smooth(r, 2, 2, h, w)},
                [node("AveragePool", ["x"], kernel_shape=[3, 3],
                      strides=[2, 2], ceil_mode=1)])


@case("pool")
def global_average_pool(r):
    h, w = size(r, 3, 6), size(r, 3, 6)
    return Case({"x": smooth(r, 2, 5, h, w)},
                [node("GlobalAveragePool", ["x"])])


# ---------------------------------------------------------------------------
# Normalisation


def batch_norm(r, x, channels):
    return Case({"x": x, "scale": smooth(r, channels, lo=0.5, hi=1.5),
                 "bias": smooth(r, channels)},
                [node("BatchNormalization",
                      ["x", "scale", "bias", "mean", "var"], epsilon=1e-3)],
                constants=[const("mean", r.uniform(-1, 1, channels), np.float32),
                           const("var", r.uniform(0.5, 2, channels),
                                 np.float32)])


@case("norm")
def batch_norm_training_4d(r):
    return batch_norm(r, smooth(r, 3, 4, size(r, 3, 5), size(r, 3, 5)), 4)


@case("norm")
def batch_norm_training_2d(r):
    return batch_norm(r, smooth(r, 6, 5), 5)


@case("norm")
def lrn_size_3(r):
    return Case({"x": smooth(r, 2, 5, 3, 4)},
                [node("LRN", ["x"], size=3, alpha=0.8, beta=0.75, bias=1.5)])


@case("norm")
def lrn_size_5(r):
    return Case({"x": smooth(r, 2, 6, 3, 3, lo=-2, hi=2)},
                [node("LRN", ["x"], size=5, alpha=0.5, beta=0.6, bias=2.0)])


@case("norm")
def layer_norm_last_axis(r):
    return Case({"x": smooth(r, 3, 5), "scale": smooth(r, 5),
                 "bias": smooth(r, 5)},
                [node("LayerNormalization", ["x", "scale", "bias"],
                      epsilon=1e-3)], opset=17)


@case("norm")
def layer_norm_axis_1_statistics(r):
    # Mean and InvStdDev read by the graph as well as Y.
    return Case({"x": smooth(r, 2, 3, 4), "scale": smooth(r, 3, 4)},
                [helper.make_node("LayerNormalization", ["x", "scale"],
                                  ["n", "mean", "inv"], axis=1),
                 helper.make_node("Add", ["n", "mean"], ["shifted"]),
                 node("Mul", ["shifted", "inv"])], opset=17)


@case("norm")
def group_norm_per_channel(r):
    # onnx's shape inference knows no output of GroupNormalization 21.
    # Version 18 (per-group scale and bias, the same ops) is deprecated, and
    # onnx's checker refuses models of it.
    return Case({"x": smooth(r, 2, 4, 3, 3), "scale": smooth(r, 4),
                 "bias": smooth(r, 4)},
                [node("GroupNormalization", ["x", "scale", "bias"],
                      num_groups=2)], opset=21, output_shape=(2, 4, 3, 3))


@case("norm")
def instance_norm(r):
    return Case({"x": smooth(r, 2, 3, 4, 3), "scale": smooth(r, 3),
                 "bias": smooth(r, 3)},
                [node("InstanceNormalization", ["x", "scale", "bias"])])


# ---------------------------------------------------------------------------
# Matrix products


@case("matmul")
def gemm_bias_row_alpha_beta(r):
    return Case({"a": smooth(r, 3, 5), "b": smooth(r, 5, 4), "c": smooth(r, 4)},
                [node("Gemm", ["a", "b", "c"], alpha=0.7, beta=1.3)])


@case("matmul")
def gemm_transpose_a_bias_column(r):
    return Case({"a": smooth(r, 5, 3), "b": smooth(r, 5, 4),
                 "c": smooth(r, 3, 1)},
                [node("Gemm", ["a", "b", "c"], transA=1, beta=0.5)])


@case("matmul")
def gemm_transpose_b_bias_1xn(r):
    return Case({"a": smooth(r, 3, 5), "b": smooth(r, 4, 5),
                 "c": smooth(r, 1, 4)},
                [node("Gemm", ["a", "b", "c"], transB=1, alpha=1.5)])


@case("matmul")
def gemm_transpose_both_full_bias(r):
    return Case({"a": smooth(r, 5, 3), "b": smooth(r, 4, 5),
                 "c": smooth(r, 3, 4)},
                [node("Gemm", ["a", "b", "c"], transA=1, transB=1)])


@case("matmul")
def matmul_2d(r):
    return Case({"a": smooth(r, 4, 6), "b": smooth(r, 6, 3)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def matmul_vector(r):
    return Case({"a": smooth(r, 5), "b": smooth(r, 5, 3)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def matmul_stacked(r):
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 4, 5)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def matmul_batched(r):
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 2, 4, 5)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def matmul_batched_broadcast(r):
    # Each operand broadcast along a batch dimension the other has.
    return Case({"a": smooth(r, 2, 1, 3, 4), "b": smooth(r, 3, 4, 5)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def matmul_attention_scores(r):
    # q @ k^T with batch and head dimensions, then scores @ v.
    return Case({"q": smooth(r, 2, 2, 3, 4), "k": smooth(r, 2, 2, 5, 4),
                 "v": smooth(r, 2, 2, 5, 3)},
                [helper.make_node("Transpose", ["k"], ["kt"],
                                  perm=[0, 1, 3, 2]),
                 helper.make_node("MatMul", ["q", "kt"], ["scores"]),
                 node("MatMul", ["scores", "v"])])


@case("matmul")
def matmul_vector_batched(r):
    return Case({"a": smooth(r, 4), "b": smooth(r, 2, 4, 3)},
                [node("MatMul", ["a", "b"])])


@case("matmul")
def einsum_attention(r):
    # Both of attention's contractions, as Einsum writes them.
    return Case({"q": smooth(r, 2, 2, 3, 4), "k": smooth(r, 2, 2, 5, 4),
                 "v": smooth(r, 2, 2, 5, 3)},
                [helper.make_node("Einsum", ["q", "k"], ["scores"],
                                  equation="bhqd,bhkd->bhqk"),
                 node("Einsum", ["scores", "v"], equation="bhqk,bhkd->bhqd")],
                opset=12)


@case("matmul")
def einsum_ellipsis_and_sum(r):
    # "...ij,...jk->...ik" with b broadcast along the ellipsis, and labels
    # summed in one operand only.
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 1, 4, 5),
                 "c": smooth(r, 3, 4, 2)},
                [helper.make_node("Einsum", ["a", "b"], ["ab"],
                                  equation="...ij,...jk->...ik"),
                 node("Einsum", ["ab", "c"], equation="bik,ijl->bk")],
                opset=12)


# ---------------------------------------------------------------------------
# Elementwise binary ops


@case("binary")
def add_broadcast(r):
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 3, 1)},
                [node("Add", ["a", "b"])])


@case("binary")
def sub_broadcast_both(r):
    return Case({"a": smooth(r, 2, 1, 4), "b": smooth(r, 3, 1)},
                [node("Sub", ["a", "b"])])


@case("binary")
def mul_broadcast(r):
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 4)},
                [node("Mul", ["a", "b"])])


@case("binary")
def mul_same_value(r):
    # x * x: the two contributions to x's gradient are summed.
    return Case({"x": smooth(r, 3, 4)}, [node("Mul", ["x", "x"])])


@case("binary")
def div_broadcast(r):
    return Case({"a": smooth(r, 3, 1), "b": magnitude(r, 2, 3, 4)},
                [node("Div", ["a", "b"])])


@case("binary")
def div_broadcast_denominator(r):
    return Case({"a": smooth(r, 2, 3, 4), "b": magnitude(r, 1, 4)},
                [node("Div", ["a", "b"])])


@case("binary")
def pow_broadcast(r):
    return Case({"a": smooth(r, 2, 3, lo=0.5, hi=2.0),
                 "e": smooth(r, 3, lo=-1.5, hi=2.0)},
                [node("Pow", ["a", "e"])])


@case("binary")
def sum_three(r):
    return Case({"a": smooth(r, 2, 3), "b": smooth(r, 3), "c": smooth(r, 2, 1)},
                [node("Sum", ["a", "b", "c"])])


@case("binary")
def mean_two(r):
    return Case({"a": smooth(r, 2, 3), "b": smooth(r, 2, 3)},
                [node("Mean", ["a", "b"])])


@case("binary")
def where_broadcast(r):
    condition = r.rand(3, 1) < 0.5
    condition[0, 0], condition[1, 0] = True, False
    return Case({"a": smooth(r, 2, 3, 4), "b": smooth(r, 4)},
                [node("Where", ["c", "a", "b"])],
                constants=[const("c", condition, np.bool_)])


@case("binary")
def where_of_comparison(r):
    # A leaky relu as Where(x > 0, x, 0.1 x): the mask from Greater has no
    # gradient, both branches do.
    x = away(r, 3, 5)
    return Case({"x": x},
                [helper.make_node("Greater", ["x", "zero"], ["positive"]),
                 helper.make_node("Mul", ["x", "slope"], ["scaled"]),
                 node("Where", ["positive", "x", "scaled"])],
                constants=[const("zero", 0.0, np.float32),
                           const("slope", 0.1, np.float32)])


@case("binary")
def mod_fmod_broadcast(r):
    # a = b (k + u) with u in [0.15, 0.85]: a / b stays between the integers
    # where the remainder jumps.
    b = magnitude(r, 3, 1, lo=0.7, hi=1.3)
    k = r.randint(-2, 3, (2, 3, 4))
    a = (b * (k + r.uniform(0.15, 0.85, (2, 3, 4)))).astype(np.float32)
    return Case({"a": a, "b": b}, [node("Mod", ["a", "b"], fmod=1)])


@case("binary")
def prelu_per_channel(r):
    return Case({"x": away(r, 2, 3, 4), "slope": smooth(r, 3, 1)},
                [node("PRelu", ["x", "slope"])])


# ---------------------------------------------------------------------------
# Elementwise unary ops


def unary(op_type, values, **attrs):
    """A builder for op_type on one input drawn by values(rng)."""
    return lambda r: Case({"x": values(r)}, [node(op_type, ["x"], **attrs)])


for _name, _builder in {
    "relu": unary("Relu", lambda r: away(r, 3, 5)),
    "leaky_relu": unary("LeakyRelu", lambda r: away(r, 3, 5), alpha=0.2),
    "sigmoid": unary("Sigmoid", lambda r: smooth(r, 3, 5, lo=-3, hi=3)),
    "tanh": unary("Tanh", lambda r: smooth(r, 3, 5, lo=-2, hi=2)),
    "erf": unary("Erf", lambda r: smooth(r, 3, 5, lo=-2, hi=2)),
    "exp": unary("Exp", lambda r: smooth(r, 3, 5)),
    "log": unary("Log", lambda r: smooth(r, 3, 5, lo=0.5, hi=2.0)),
    "sqrt": unary("Sqrt", lambda r: smooth(r, 3, 5, lo=0.5, hi=2.0)),
    "neg": unary("Neg", lambda r: smooth(r, 3, 5)),
    "abs": unary("Abs", lambda r: away(r, 3, 5)),
    "reciprocal": unary("Reciprocal", lambda r: magnitude(r, 3, 5)),
    "sin": unary("Sin", lambda r: smooth(r, 3, 5, lo=-3, hi=3)),
    "cos": unary("Cos", lambda r: smooth(r, 3, 5, lo=-3, hi=3)),
    "softplus": unary("Softplus", lambda r: smooth(r, 3, 5, lo=-4, hi=4)),
    "elu": unary("Elu", lambda r: away(r, 3, 5, lo=-2, hi=2), alpha=0.7),
    "selu": unary("Selu", lambda r: away(r, 3, 5, lo=-2, hi=2)),
    "softmax_inner": unary("Softmax", lambda r: smooth(r, 2, 3, 5, lo=-2, hi=2),
                           axis=-1),
    "softmax_outer": unary("Softmax", lambda r: smooth(r, 4, 3, 2, lo=-2, hi=2),
                           axis=0),
    "log_softmax_inner": unary("LogSoftmax",
                               lambda r: smooth(r, 3, 6, lo=-2, hi=2), axis=1),
    "log_softmax_middle": unary(
        "LogSoftmax", lambda r: smooth(r, 2, 4, 3, lo=-2, hi=2), axis=1),
}.items():
    _builder.__name__ = _name
    case("unary")(_builder)


@case("unary")
def clip(r):
    x = away(r, 3, 5, kinks=(-0.4, 0.5))
    return Case({"x": x}, [node("Clip", ["x", "lo", "hi"])],
                constants=[const("lo", -0.4, np.float32),
                           const("hi", 0.5, np.float32)])


@case("unary")
def hard_sigmoid_default(r):
    # alpha 0.2, beta 0.5: kinks at x = -2.5 and 2.5.
    x = away(r, 3, 5, kinks=(-2.5, 2.5), lo=-4, hi=4)
    return Case({"x": x}, [node("HardSigmoid", ["x"])])


@case("unary")
def hard_sigmoid_alpha_beta(r):
    # Kinks at x = (0 - 0.3) / 0.5 and (1 - 0.3) / 0.5.
    x = away(r, 3, 5, kinks=(-0.6, 1.4), lo=-2, hi=2)
    return Case({"x": x}, [node("HardSigmoid", ["x"], alpha=0.5, beta=0.3)])


@case("unary")
def hard_swish(r):
    # Kinks at x = -3 and 3; inputs on both flat sides and the curve.
    x = away(r, 3, 5, kinks=(-3.0, 3.0), lo=-4, hi=4)
    return Case({"x": x}, [node("HardSwish", ["x"])], opset=14)


def plus_step(op_type, kinks):
    """x + op(x) for a piecewise-constant op, whose zero gradient alone the
    check would find insensitive: a wrong rule adds to x's gradient of 1."""
    def build(r):
        return Case({"x": away(r, 3, 5, kinks=kinks, lo=-2, hi=2)},
                    [helper.make_node(op_type, ["x"], ["step"]),
                     node("Add", ["x", "step"])])
    return build


for _name, _builder in {
    "floor": plus_step("Floor", (-1, 0, 1)),
    "ceil": plus_step("Ceil", (-1, 0, 1)),
    "round": plus_step("Round", (-1.5, -0.5, 0.5, 1.5)),
}.items():
    _builder.__name__ = _name
    case("unary")(_builder)


@case("unary")
def mish(r):
    x = smooth(r, 3, 5, lo=-3, hi=3)
    return Case({"x": x}, [node("Mish", ["x"])], opset=18)


@case("unary")
def gelu_exact(r):
    x = smooth(r, 3, 5, lo=-3, hi=3)
    return Case({"x": x}, [node("Gelu", ["x"])], opset=20)


@case("unary")
def gelu_tanh(r):
    x = smooth(r, 3, 5, lo=-3, hi=3)
    return Case({"x": x}, [node("Gelu", ["x"], approximate="tanh")], opset=20)


@case("unary")
def dropout(r):
    return Case({"x": smooth(r, 4, 6)}, [node("Dropout", ["x", "ratio"])],
                constants=[const("ratio", 0.3, np.float32)])


@case("unary")
def cast_float64(r):
    # An op in float64 between the casts keeps them from folding away.
    return Case({"x": smooth(r, 3, 4)},
                [helper.make_node("Cast", ["x"], ["x64"], to=11),
                 helper.make_node("Tanh", ["x64"], ["t64"]),
                 node("Cast", ["t64"], to=1)])


# ---------------------------------------------------------------------------
# Reductions


@case("reduce")
def reduce_mean_axes(r):
    return Case({"x": smooth(r, 2, 3, 4, 5)},
                [node("ReduceMean", ["x"], axes=[1, 3], keepdims=0)])


@case("reduce")
def reduce_mean_negative_axis_keepdims(r):
    return Case({"x": smooth(r, 3, 4, 5)},
                [node("ReduceMean", ["x"], axes=[-1], keepdims=1)])


@case("reduce")
def reduce_sum_axes_keepdims(r):
    return Case({"x": smooth(r, 2, 3, 4, 2)},
                [node("ReduceSum", ["x", "axes"], keepdims=1)],
                constants=[const("axes", [0, 2])])


@case("reduce")
def reduce_sum_all(r):
    return Case({"x": smooth(r, 3, 4)},
                [node("ReduceSum", ["x"], keepdims=0)])


@case("reduce")
def reduce_l2(r):
    return Case({"x": magnitude(r, 2, 3, 4)},
                [node("ReduceL2", ["x"], axes=[1, 2], keepdims=0)])


@case("reduce")
def reduce_l2_axes_input(r):
    return Case({"x": magnitude(r, 3, 4)},
                [node("ReduceL2", ["x", "axes"])],
                constants=[const("axes", [-1])], opset=18)


@case("reduce")
def reduce_log_sum_exp(r):
    return Case({"x": smooth(r, 2, 3, 4, lo=-2, hi=2)},
                [node("ReduceLogSumExp", ["x"], axes=[0, 2])])


@case("reduce")
def reduce_log_sum_exp_axes_input(r):
    return Case({"x": smooth(r, 3, 5, lo=-2, hi=2)},
                [node("ReduceLogSumExp", ["x", "axes"], keepdims=0)],
                constants=[const("axes", [1])], opset=18)


@case("reduce")
def reduce_max_axes(r):
    # Distinct values: no maximum changes under the perturbation.
    return Case({"x": distinct(r, 2, 3, 4)},
                [node("ReduceMax", ["x"], axes=[1, 2], keepdims=0)])


@case("reduce")
def reduce_min_keepdims(r):
    return Case({"x": distinct(r, 3, 5)},
                [node("ReduceMin", ["x"], axes=[-1], keepdims=1)])


@case("reduce")
def global_max_pool(r):
    return Case({"x": distinct(r, 2, 3, 3, 4)}, [node("GlobalMaxPool", ["x"])])


@case("reduce")
def reduce_max_ties(r):
    # Equal maxima share the gradient: max(x, x) over a concatenation.
    return Case({"x": distinct(r, 2, 3)},
                [helper.make_node("Concat", ["x", "x"], ["xx"], axis=1),
                 node("ReduceMax", ["xx"], axes=[1])])


# ---------------------------------------------------------------------------
# Data movement


@case("shape")
def concat_three(r):
    return Case({"a": smooth(r, 2, 1, 3), "b": smooth(r, 2, 3, 3),
                 "c": smooth(r, 2, 2, 3)},
                [node("Concat", ["a", "b", "c"], axis=1)])


@case("shape")
def concat_last_axis(r):
    return Case({"a": smooth(r, 3, 2), "b": smooth(r, 3, 4)},
                [node("Concat", ["a", "b"], axis=-1)])


@case("shape")
def reshape(r):
    return Case({"x": smooth(r, 2, 3, 4)}, [node("Reshape", ["x", "shape"])],
                constants=[const("shape", [0, -1, 2])])


@case("shape")
def flatten(r):
    return Case({"x": smooth(r, 2, 3, 2, 2)}, [node("Flatten", ["x"], axis=2)])


@case("shape")
def squeeze(r):
    return Case({"x": smooth(r, 3, 1, 4, 1)},
                [node("Squeeze", ["x", "axes"])], constants=[const("axes", [1])])


@case("shape")
def unsqueeze(r):
    return Case({"x": smooth(r, 3, 4)}, [node("Unsqueeze", ["x", "axes"])],
                constants=[const("axes", [0, 2])])


@case("shape")
def identity(r):
    return Case({"x": smooth(r, 3, 4)}, [node("Identity", ["x"])])


@case("shape")
def transpose(r):
    return Case({"x": smooth(r, 2, 3, 4, 2)},
                [node("Transpose", ["x"], perm=[2, 0, 3, 1])])


@case("shape")
def pad_constant(r):
    return Case({"x": smooth(r, 2, 3, 3, 4)}, [node("Pad", ["x", "pads", "fill"])],
                constants=[const("pads", [0, 1, 2, 0, 1, 0, 1, 2]),
                           const("fill", 0.5, np.float32)])


@case("shape")
def slice_negative_starts(r):
    return Case({"x": smooth(r, 3, 5, 6)},
                [node("Slice", ["x", "starts", "ends", "axes", "steps"])],
                constants=[const("starts", [-4, 1]), const("ends", [5, -1]),
                           const("axes", [1, 2]), const("steps", [1, 1])])



@case("shape")
def slice_strided(r):
    # Step 2 from an offset (levit's subsampling), -2 (reversed, every other
    # element) and 3 with elements left over after the last one read.
    return Case({"x": smooth(r, 3, 7, 8)},
                [node("Slice", ["x", "starts", "ends", "axes", "steps"])],
                constants=[const("starts", [1, 6, 0]), const("ends", [7, 0, 8]),
                           const("axes", [1, 2, 0]),
                           const("steps", [2, -2, 3])])


@case("shape")
def gather_repeated_negative(r):
    # Rows gathered twice sum their gradients; -1 is the last row.
    return Case({"x": smooth(r, 5, 3)}, [node("Gather", ["x", "indices"])],
                constants=[const("indices", [4, 0, 2, -1, 0])])


@case("shape")
def gather_table(r):
    # levit's attention biases: a [heads, offsets] table read at a 2-D
    # index grid along the last axis.
    return Case({"x": smooth(r, 2, 5)},
                [node("Gather", ["x", "indices"], axis=1)],
                constants=[const("indices", [[0, 1, 2], [1, 0, 4],
                                             [3, 3, 0]])])


@case("shape")
def gather_middle_axis_scalar(r):
    # A class token: x[:, 0] of [batch, tokens, channels].
    return Case({"x": smooth(r, 2, 4, 3)},
                [node("Gather", ["x", "index"], axis=1)],
                constants=[const("index", 0)])


@case("shape")
def gather_middle_axis(r):
    return Case({"x": smooth(r, 2, 4, 3)},
                [node("Gather", ["x", "indices"], axis=-2)],
                constants=[const("indices", [[3, 1], [1, -4]])])


@case("shape")
def scatter_nd_rows(r):
    # Swin-style writes: two rows of x replaced by u (no gradient to x
    # there), and added to x (the gradient to both).
    return Case({"x": smooth(r, 4, 2, 3), "u": smooth(r, 2, 3)},
                [helper.make_node("ScatterND", ["x", "rows", "u"], ["w"]),
                 helper.make_node("ScatterND", ["w", "rows", "u"], ["y"],
                                  reduction="add")],
                constants=[const("rows", [[3, 1], [0, -2]])], opset=16)


@case("shape")
def expand_both_ways(r):
    # [3, 1] with shape [2, 1, 4]: the input broadcasts along two dimensions
    # and gains one; its gradient sums over all three.
    return Case({"x": smooth(r, 3, 1)}, [node("Expand", ["x", "shape"])],
                constants=[const("shape", [2, 1, 4])])


@case("shape")
def tile(r):
    return Case({"x": smooth(r, 2, 3)}, [node("Tile", ["x", "repeats"])],
                constants=[const("repeats", [3, 2])])


@case("shape")
def split_sizes(r):
    # The parts in another order, so that each reaches the loss on its own.
    return Case({"x": smooth(r, 2, 5, 3)},
                [helper.make_node("Split", ["x", "sizes"], ["p", "q"], axis=1),
                 node("Concat", ["q", "p"], axis=1)],
                constants=[const("sizes", [2, 3])])


@case("shape")
def split_num_outputs_uneven(r):
    return Case({"x": smooth(r, 3, 7)},
                [helper.make_node("Split", ["x"], ["p", "q", "s"], axis=-1,
                                  num_outputs=3),
                 helper.make_node("Mul", ["p", "q"], ["pq"]),
                 node("Concat", ["s", "pq"], axis=1)], opset=18)


@case("shape")
def trilu_upper(r):
    return Case({"x": smooth(r, 2, 3, 4)}, [node("Trilu", ["x", "k"])],
                constants=[const("k", 1)], opset=14)


@case("shape")
def trilu_lower(r):
    return Case({"x": smooth(r, 4, 3)}, [node("Trilu", ["x"], upper=0)],
                opset=14)


@case("shape")
def range_and_constant_of_shape(r):
    # Constants from shape arithmetic: x * range(0.5, 3, 0.5) + ones(shape).
    return Case({"x": smooth(r, 2, 5)},
                [helper.make_node("Range", ["start", "limit", "delta"],
                                  ["steps"]),
                 helper.make_node("Mul", ["x", "steps"], ["scaled"]),
                 helper.make_node("Shape", ["x"], ["shape"]),
                 helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                                  value=numpy_helper.from_array(
                                      np.ones(1, np.float32))),
                 node("Add", ["scaled", "ones"])],
                constants=[const("start", 0.5, np.float32),
                           const("limit", 3.0, np.float32),
                           const("delta", 0.5, np.float32)])


@case("shape")
def resize_nearest_2x(r):
    # PyTorch's nearest upsampling: each element repeated (a broadcast).
    return Case({"x": smooth(r, 1, 2, 3, 4)},
                [node("Resize", ["x", "", "scales"], mode="nearest",
                      coordinate_transformation_mode="asymmetric",
                      nearest_mode="floor")],
                constants=[const("scales", [1, 1, 2, 2], np.float32)])


@case("shape")
def resize_nearest_to_sizes(r):
    # 5 to 7 and 6 to 4: neither repeats elements (interpolation matrices).
    return Case({"x": smooth(r, 1, 2, 5, 6)},
                [node("Resize", ["x", "", "", "sizes"], mode="nearest")],
                constants=[const("sizes", [1, 2, 7, 4])])


@case("shape")
def resize_linear_half_pixel(r):
    return Case({"x": smooth(r, 2, 1, 3, 4)},
                [node("Resize", ["x", "", "scales"], mode="linear")],
                constants=[const("scales", [1, 1, 2, 1.5], np.float32)])


@case("shape")
def resize_linear_align_corners_axes(r):
    return Case({"x": smooth(r, 1, 2, 4, 3)},
                [node("Resize", ["x", "", "", "sizes"], mode="linear",
                      coordinate_transformation_mode="align_corners",
                      axes=[2, 3])],
                constants=[const("sizes", [7, 5])], opset=18)


@case("shape")
def resize_cubic_antialias_downsample(r):
    return Case({"x": smooth(r, 1, 1, 6, 5)},
                [node("Resize", ["x", "", "scales"], mode="cubic",
                      antialias=1, exclude_outside=1)],
                constants=[const("scales", [1, 1, 0.5, 1.4], np.float32)],
                opset=18)


# ---------------------------------------------------------------------------
# Ops that are not differentiated: a clear error


def not_differentiated(inputs, op_type, why, constants=(), **attrs):
    """A builder for op_type on inputs of the given shapes, whose compile
    must fail with "has no gradient: why"."""
    def build(r):
        return Case({name: smooth(r, *shape) for name, shape in inputs.items()},
                    [node(op_type, list(inputs) + [c[0] for c in constants],
                          **attrs)],
                    constants=[const(*c) for c in constants],
                    expect_error="has no gradient: " + why)
    return build


_PAD = ("pads", [0, 1, 1, 0, 1, 2])
for _name, _builder in {
    "max_elementwise": not_differentiated(
        {"a": (3,), "b": (3,)}, "Max",
        "elementwise max is not differentiated yet"),
    "min_elementwise": not_differentiated(
        {"a": (3,), "b": (3,)}, "Min",
        "elementwise min is not differentiated yet"),
    "pad_reflect": not_differentiated(
        {"x": (2, 3, 4)}, "Pad",
        "reflect and edge padding are not differentiated yet", [_PAD],
        mode="reflect"),
    "pad_edge": not_differentiated(
        {"x": (2, 3, 4)}, "Pad",
        "reflect and edge padding are not differentiated yet", [_PAD],
        mode="edge"),
}.items():
    _builder.__name__ = _name
    case("errors")(_builder)
