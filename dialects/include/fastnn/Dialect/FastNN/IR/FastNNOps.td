//===- FastNNOps.td - fastnn operations --------------------*- tablegen -*-===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_TD
#define FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_TD

include "fastnn/Dialect/FastNN/IR/FastNNBase.td"
include "fastnn/Dialect/FastNN/IR/FastNNInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class FastNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<FastNN_Dialect, mnemonic, traits>;

// Compute ops are pure and infer their result type; the declared type must
// match what inference computes.
class FastNN_ComputeOp<string mnemonic, list<Trait> traits = []>
    : FastNN_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<FastNN_GradientOpInterface>], traits)>;

// Ops whose result has the input's type; ODS derives their type inference.
class FastNN_SameTypeOp<string mnemonic, list<Trait> traits = []>
    : FastNN_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType,
        InferTypeOpInterface,
        DeclareOpInterfaceMethods<FastNN_GradientOpInterface>], traits)>;

//===----------------------------------------------------------------------===//
// Model state
//===----------------------------------------------------------------------===//

def FastNN_ParameterOp : FastNN_Op<"parameter", [Symbol,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "a named model parameter with its initial value";
  let description = [{
    Declares one piece of model state at module level: a trainable tensor
    (weights, biases, batch-norm scale and shift), a statistic that training
    updates without gradients (batch-norm running mean and variance), or an
    optimizer slot (momentum accumulators and the like). The
    initial value is usually a `dense_resource` blob imported from an ONNX
    initializer; its type is the parameter's type.

    ```mlir
    fastnn.parameter @conv1.weight trainable = dense_resource<w0> : tensor<64x3x7x7xf32>
    fastnn.parameter @bn1.running_mean statistic = dense<0.0> : tensor<64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FastNN_ParamRoleAttr:$role,
                       ElementsAttr:$initial_value);
  let assemblyFormat = [{
    $sym_name `` $role `=` $initial_value attr-dict
  }];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInitialValue().getType());
    }
    bool isTrainable() { return getRole() == ParamRole::Trainable; }
  }];
  let hasVerifier = 1;
}

def FastNN_ParamOp : FastNN_Op<"param", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a parameter's current value";
  let description = [{
    ```mlir
    %w = fastnn.param @conv1.weight : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def FastNN_ConstantOp : FastNN_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalisation
//===----------------------------------------------------------------------===//

def FastNN_Conv2DOp : FastNN_ComputeOp<"conv2d", [FastNN_RunsAsKernel,
    FastNN_SelectableLayout, FastNN_LowPrecision, FastNN_AcceptsPostOp]> {
  let summary = "2-D convolution with groups, strides, dilations and padding";
  let description = [{
    `input` is NCHW (or NHWC with `layout = #fastnn.layout<nhwc>`), `filter` is
    OIHW (OHWI for nhwc) with I = C / groups, `bias` (optional) has O elements.
    `pads` is [top, left, bottom, right], as ONNX orders them. Depthwise
    convolution is groups = C.

    ```mlir
    %y = fastnn.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins FastNN_FloatTensor:$input, FastNN_FloatTensor:$filter,
      Optional<FastNN_FloatTensor>:$bias,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$strides,
      DefaultValuedAttr<FastNN_Quad, "{0, 0, 0, 0}">:$pads,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$dilations,
      DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

class FastNN_Pool2DOp<string mnemonic> : FastNN_ComputeOp<mnemonic,
    [SameOperandsAndResultElementType, FastNN_RunsAsKernel,
     FastNN_SelectableLayout, FastNN_FollowsPrecision]> {
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def FastNN_MaxPool2DOp : FastNN_Pool2DOp<"max_pool2d"> {
  let summary = "2-D max pooling";
  let description = [{
    Padding never wins the maximum. With `ceil_mode` the output size rounds
    up, as ONNX specifies.
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
      FastNN_Pair:$kernel_shape,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$strides,
      DefaultValuedAttr<FastNN_Quad, "{0, 0, 0, 0}">:$pads,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$dilations,
      UnitAttr:$ceil_mode,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
}

def FastNN_MaxPool2DIndicesOp : FastNN_ComputeOp<"max_pool2d_indices"> {
  let summary = "where each 2-D max pooling window takes its maximum";
  let description = [{
    The Indices output of ONNX MaxPool (PyTorch's max_pool2d with
    return_indices): for each window of the `max_pool2d` with the same
    attributes, the flat index into the NCHW input of its maximum, as int64.
    `storage_order` 0 counts row-major, n*C*H*W + c*H*W + h*W + w; 1
    column-major within each image plane, n*C*H*W + c*H*W + w*H + h. Ties
    go to the first position in window order (row by row); padding never
    wins. NCHW only; the result has no gradient.

    ```mlir
    %i = fastnn.max_pool2d_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xi64>
    ```
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
      FastNN_Pair:$kernel_shape,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$strides,
      DefaultValuedAttr<FastNN_Quad, "{0, 0, 0, 0}">:$pads,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$dilations,
      UnitAttr:$ceil_mode,
      DefaultValuedAttr<I64Attr, "0">:$storage_order,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def FastNN_AvgPool2DOp : FastNN_Pool2DOp<"avg_pool2d"> {
  let summary = "2-D average pooling";
  let description = [{
    With `count_include_pad` every window divides by the kernel area;
    without it, by the number of input elements the window covers.
    `dilations` spread the window's taps as ONNX's AveragePool from
    version 19 does.
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
      FastNN_Pair:$kernel_shape,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$strides,
      DefaultValuedAttr<FastNN_Quad, "{0, 0, 0, 0}">:$pads,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$dilations,
      UnitAttr:$ceil_mode, UnitAttr:$count_include_pad,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
}

def FastNN_BatchNormOp : FastNN_ComputeOp<"batch_norm",
    [AllElementTypesMatch<["scale", "bias", "mean", "variance"]>,
     FastNN_RunsAsKernel, FastNN_SelectableLayout, FastNN_FollowsPrecision,
     FastNN_AcceptsPostOp,
     DeclareOpInterfaceMethods<FastNN_ActivationsOpInterface>]> {
  let summary = "batch normalisation with given statistics";
  let description = [{
    y = scale * (x - mean) / sqrt(variance + epsilon) + bias, per channel.
    The parameters and statistics share one element type; the input (and
    result) may be narrower (bf16 or f16 activations of mixed precision with
    f32 statistics).
    `momentum` is the running-statistics update factor training uses
    (running = momentum * running + (1 - momentum) * batch, ONNX's convention).

    ```mlir
    %y = fastnn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f64}
        : (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x56x56xf32>
    ```
  }];
  let arguments = (ins FastNN_FloatTensor:$input, FastNN_FloatTensor:$scale,
      FastNN_FloatTensor:$bias, FastNN_FloatTensor:$mean,
      FastNN_FloatTensor:$variance,
      DefaultValuedAttr<ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>, "1e-5">:$epsilon,
      DefaultValuedAttr<F64Attr, "0.9">:$momentum,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def FastNN_LRNOp : FastNN_SameTypeOp<"lrn", [FastNN_RunsAsKernel]> {
  let summary = "local response normalisation across channels";
  let description = [{
    ONNX semantics: y = x / (bias + alpha / size * sum(x^2 over `size`
    neighbouring channels))^beta.
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
      ConfinedAttr<I64Attr, [IntPositive]>:$size,
      DefaultValuedAttr<F64Attr, "1e-4">:$alpha,
      DefaultValuedAttr<F64Attr, "0.75">:$beta,
      DefaultValuedAttr<F64Attr, "1.0">:$bias);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def FastNN_MatMulOp : FastNN_ComputeOp<"matmul",
    [SameOperandsAndResultElementType, FastNN_RunsAsKernel,
     FastNN_LowPrecision, FastNN_AcceptsPostOp]> {
  let summary = "matrix product, batched with broadcasting";
  let description = [{
    Operands of rank >= 2; leading (batch) dimensions broadcast as in numpy.
    `transpose_a` / `transpose_b` transpose the last two dimensions first.
  }];
  let arguments = (ins FastNN_FloatTensor:$a, FastNN_FloatTensor:$b,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class FastNN_BinaryOp<string mnemonic, list<Trait> traits = [],
                      Trait elementwise = FastNN_Elementwise>
    : FastNN_ComputeOp<mnemonic, !listconcat(
        [SameOperandsAndResultElementType, elementwise,
         FastNN_LayoutAgnostic], traits)> {
  let description = [{
    Elementwise with numpy (ONNX multidirectional) broadcasting.
  }];
  let arguments = (ins FastNN_Tensor:$lhs, FastNN_Tensor:$rhs);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def FastNN_AddOp : FastNN_BinaryOp<"add",
    [Commutative, FastNN_FollowsPrecision]> {
  let summary = "lhs + rhs";
}
def FastNN_SubOp : FastNN_BinaryOp<"sub", [FastNN_FollowsPrecision]> {
  let summary = "lhs - rhs";
}
def FastNN_MulOp : FastNN_BinaryOp<"mul",
    [Commutative, FastNN_FollowsPrecision]> {
  let summary = "lhs * rhs";
}
def FastNN_DivOp : FastNN_BinaryOp<"div"> { let summary = "lhs / rhs"; }
def FastNN_MaxOp : FastNN_BinaryOp<"max", [Commutative]> { let summary = "max(lhs, rhs)"; }
def FastNN_MinOp : FastNN_BinaryOp<"min", [Commutative]> { let summary = "min(lhs, rhs)"; }
def FastNN_PowOp : FastNN_BinaryOp<"pow", [], FastNN_ElementwiseOfSomeTypes> {
  let summary = "lhs ^ rhs";
}

def FastNN_ModOp : FastNN_BinaryOp<"mod", [], FastNN_ElementwiseOfSomeTypes> {
  let summary = "remainder of lhs / rhs";
  let description = [{
    With `fmod` the remainder has the sign of lhs (C's fmod), otherwise that
    of rhs (Python's %), as ONNX Mod. Integer division by zero gives 0.
  }];
  let arguments = (ins FastNN_Tensor:$lhs, FastNN_Tensor:$rhs,
                       UnitAttr:$fmod);
  let hasFolder = 0;
}

// Comparisons and logic: boolean results, no gradient to their operands.
class FastNN_CompareOp<string mnemonic, list<Trait> traits = []>
    : FastNN_ComputeOp<mnemonic, !listconcat([SameOperandsElementType,
        FastNN_ElementwiseOfSomeTypes, FastNN_LayoutAgnostic], traits)> {
  let description = [{
    Elementwise with numpy broadcasting; the result is i1.
  }];
  let arguments = (ins FastNN_Tensor:$lhs, FastNN_Tensor:$rhs);
  let results = (outs FastNN_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def FastNN_EqualOp : FastNN_CompareOp<"equal", [Commutative]> {
  let summary = "lhs == rhs";
}
def FastNN_LessOp : FastNN_CompareOp<"less"> { let summary = "lhs < rhs"; }
def FastNN_GreaterOp : FastNN_CompareOp<"greater"> { let summary = "lhs > rhs"; }
def FastNN_AndOp : FastNN_CompareOp<"and", [Commutative]> {
  let summary = "lhs and rhs, of booleans";
  let arguments = (ins FastNN_BoolTensor:$lhs, FastNN_BoolTensor:$rhs);
}
def FastNN_NotOp : FastNN_SameTypeOp<"not", [FastNN_Elementwise,
    FastNN_LayoutAgnostic]> {
  let summary = "logical negation of booleans";
  let arguments = (ins FastNN_BoolTensor:$input);
  let results = (outs FastNN_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def FastNN_SelectOp : FastNN_ComputeOp<"select", [
    AllElementTypesMatch<["on_true", "on_false", "result"]>,
    FastNN_Elementwise, FastNN_LayoutAgnostic]> {
  let summary = "on_true where condition, else on_false (ONNX Where)";
  let description = [{
    The three operands broadcast together as in numpy.
  }];
  let arguments = (ins FastNN_BoolTensor:$condition, FastNN_Tensor:$on_true,
                       FastNN_Tensor:$on_false);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

class FastNN_UnaryOp<string mnemonic, list<Trait> traits = []>
    : FastNN_SameTypeOp<mnemonic, !listconcat(
        [FastNN_Elementwise, FastNN_LayoutAgnostic], traits)> {
  let arguments = (ins FastNN_FloatTensor:$input);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def FastNN_NegOp : FastNN_UnaryOp<"neg", [FastNN_FollowsPrecision]> {
  let summary = "-x";
  let hasFolder = 1;
}
def FastNN_AbsOp : FastNN_UnaryOp<"abs"> { let summary = "|x|"; }
def FastNN_ExpOp : FastNN_UnaryOp<"exp"> { let summary = "e^x"; }
def FastNN_LogOp : FastNN_UnaryOp<"log"> { let summary = "natural logarithm"; }
def FastNN_SqrtOp : FastNN_UnaryOp<"sqrt"> { let summary = "square root"; }
def FastNN_ReciprocalOp : FastNN_UnaryOp<"reciprocal"> { let summary = "1 / x"; }
def FastNN_ReluOp : FastNN_UnaryOp<"relu", [FastNN_FollowsPrecision]> {
  let summary = "max(x, 0)";
}
def FastNN_SigmoidOp : FastNN_UnaryOp<"sigmoid"> { let summary = "1 / (1 + e^-x)"; }
def FastNN_TanhOp : FastNN_UnaryOp<"tanh"> { let summary = "hyperbolic tangent"; }
def FastNN_ErfOp : FastNN_UnaryOp<"erf"> { let summary = "Gauss error function"; }

def FastNN_SinOp : FastNN_UnaryOp<"sin"> { let summary = "sine"; }
def FastNN_CosOp : FastNN_UnaryOp<"cos"> { let summary = "cosine"; }
def FastNN_SoftplusOp : FastNN_UnaryOp<"softplus"> {
  let summary = "log(1 + e^x), computed without overflow";
}
// Piecewise constant: their gradient is zero almost everywhere.
def FastNN_FloorOp : FastNN_UnaryOp<"floor"> { let summary = "largest integer <= x"; }
def FastNN_CeilOp : FastNN_UnaryOp<"ceil"> { let summary = "smallest integer >= x"; }
def FastNN_RoundOp : FastNN_UnaryOp<"round"> {
  let summary = "nearest integer, halves to even";
}

def FastNN_LeakyReluOp : FastNN_UnaryOp<"leaky_relu",
    [FastNN_FollowsPrecision]> {
  let summary = "x if x >= 0 else alpha * x";
  let arguments = (ins FastNN_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def FastNN_ClipOp : FastNN_UnaryOp<"clip", [FastNN_FollowsPrecision]> {
  let summary = "min(max(x, min), max); relu6 is clip 0..6";
  let arguments = (ins FastNN_FloatTensor:$input, F64Attr:$min, F64Attr:$max);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def FastNN_DropoutOp : FastNN_UnaryOp<"dropout", [FastNN_FollowsPrecision,
    FastNN_ResultsAliasOperands]> {
  let summary = "dropout (identity at inference)";
  let description = [{
    In training each element is zeroed with probability `ratio` and the rest
    are scaled by 1 / (1 - ratio); at inference the op is the identity. A
    ratio of 0 folds away.
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
      DefaultValuedAttr<ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>, "0.5">:$ratio);
  let hasVerifier = 1;
  let hasFolder = 1;
}

// Random draws: counter-based, a pure function of (seed, step, element
// index), so they need no state, recompute bitwise, and parallelise. The
// forward function has no step (inference draws at step 0);
// fastnn-build-train-step passes the training step's.
class FastNN_RandomOp<string mnemonic, list<Trait> traits = []>
    : FastNN_Op<mnemonic, !listconcat([Pure, FastNN_ElementwiseTrait,
        DeclareOpInterfaceMethods<FastNN_ScalarBodyOpInterface,
                                  ["getScalarBodyType"]>], traits)> {
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "($step^ `:` type($step))? attr-dict `:` type($result)";
  let hasVerifier = 1;
  // The draw has no floating-point operand to compute in.
  let extraClassDefinition = [{
    ::mlir::Type $cppClass::getScalarBodyType() {
      return getType().getElementType();
    }
  }];
}

def FastNN_RandomUniformOp : FastNN_RandomOp<"random_uniform"> {
  let summary = "uniform random draws in [low, high)";
  let description = [{
    ONNX RandomUniform and RandomUniformLike: 24 random bits per element
    scaled to [low, high).
  }];
  let arguments = (ins Optional<StaticShapeTensorOf<[I64]>>:$step,
      DefaultValuedAttr<F64Attr, "0.0">:$low,
      DefaultValuedAttr<F64Attr, "1.0">:$high, I64Attr:$seed);
}

def FastNN_RandomNormalOp : FastNN_RandomOp<"random_normal"> {
  let summary = "normal random draws with a mean and a standard deviation";
  let description = [{
    ONNX RandomNormal and RandomNormalLike: the Box-Muller transform of two
    24-bit uniforms per element.
  }];
  let arguments = (ins Optional<StaticShapeTensorOf<[I64]>>:$step,
      DefaultValuedAttr<F64Attr, "0.0">:$mean,
      DefaultValuedAttr<F64Attr, "1.0">:$scale, I64Attr:$seed);
}

def FastNN_RandomMaskOp : FastNN_RandomOp<"random_mask"> {
  let summary = "a random 0/1 mask in training, its mean at inference";
  let description = [{
    With a step, each element is 1 with probability `probability` and 0
    otherwise. Without one it is `probability` everywhere, the mask's mean:
    a network that multiplies by the mask (dropout and stochastic depth, as
    exporters decompose them into a uniform draw compared with a constant)
    then computes its expectation over the masks at inference, as `dropout`
    does. fastnn-random-masks forms the op from such comparisons.
  }];
  let arguments = (ins Optional<StaticShapeTensorOf<[I64]>>:$step,
      ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>:$probability,
      I64Attr:$seed);
}

def FastNN_CastOp : FastNN_ComputeOp<"cast", [SameOperandsAndResultShape,
    FastNN_ElementwiseOfSomeTypes, FastNN_LayoutAgnostic]> {
  let summary = "element type conversion";
  let description = [{
    Float to float rounds to nearest even; float to integer truncates towards
    zero; integer to float rounds to nearest.
  }];
  let arguments = (ins FastNN_Tensor:$input, TypeAttrOf<FastNN_ElementType>:$to);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Type":$elementType), [{
      build($_builder, $_state, input, ::mlir::TypeAttr::get(elementType));
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

def FastNN_SoftmaxOp : FastNN_SameTypeOp<"softmax", [FastNN_RunsAsKernel]> {
  let summary = "softmax along one axis";
  let arguments = (ins FastNN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def FastNN_LogSoftmaxOp : FastNN_SameTypeOp<"log_softmax",
    [FastNN_RunsAsKernel]> {
  let summary = "log of softmax along one axis, computed stably";
  let arguments = (ins FastNN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class FastNN_ReduceOp<string mnemonic> : FastNN_ComputeOp<mnemonic,
    [SameOperandsAndResultElementType, FastNN_Reduction, FastNN_RunsAsKernel]> {
  let description = [{
    Reduces the listed `axes` (non-negative, distinct, ascending); with
    `keepdims` they stay as size-1 dimensions. Global pooling is a reduction
    over [2, 3] with keepdims.
  }];
  let arguments = (ins FastNN_Tensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def FastNN_ReduceSumOp : FastNN_ReduceOp<"reduce_sum"> { let summary = "sum over axes"; }
def FastNN_ReduceMeanOp : FastNN_ReduceOp<"reduce_mean"> { let summary = "mean over axes"; }
def FastNN_ReduceMaxOp : FastNN_ReduceOp<"reduce_max"> { let summary = "maximum over axes"; }
def FastNN_ReduceMinOp : FastNN_ReduceOp<"reduce_min"> { let summary = "minimum over axes"; }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def FastNN_ConcatOp : FastNN_ComputeOp<"concat",
    [SameOperandsAndResultElementType, FastNN_FollowsPrecision]> {
  let summary = "concatenation along one axis";
  let arguments = (ins Variadic<FastNN_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasFolder = 1;
}

def FastNN_ReshapeOp : FastNN_Op<"reshape", [Pure,
    SameOperandsAndResultElementType, FastNN_ResultsAliasOperands,
    FastNN_FollowsPrecision,
    DeclareOpInterfaceMethods<FastNN_GradientOpInterface>]> {
  let summary = "reinterprets a tensor with another shape of the same size";
  let description = [{
    The result type carries the new shape (shapes are static). Flatten,
    Squeeze and Unsqueeze import as reshapes.
  }];
  let arguments = (ins FastNN_Tensor:$input);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FastNN_TransposeOp : FastNN_ComputeOp<"transpose",
    [SameOperandsAndResultElementType, FastNN_FollowsPrecision]> {
  let summary = "permutes dimensions: result dim i is input dim permutation[i]";
  let arguments = (ins FastNN_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def FastNN_PadOp : FastNN_ComputeOp<"pad", [SameOperandsAndResultElementType,
    FastNN_FollowsPrecision]> {
  let summary = "pads every dimension";
  let description = [{
    `pads` holds all begin amounts then all end amounts (ONNX order), each
    non-negative. `value` fills in constant mode; reflect mirrors without
    repeating the border element; edge repeats it.
  }];
  let arguments = (ins FastNN_Tensor:$input, DenseI64ArrayAttr:$pads,
      DefaultValuedAttr<FastNN_PadModeAttr, "::mlir::fastnn::PadMode::Constant">:$mode,
      DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def FastNN_SliceOp : FastNN_Op<"slice", [Pure, SameOperandsAndResultElementType,
    FastNN_FollowsPrecision,
    DeclareOpInterfaceMethods<FastNN_GradientOpInterface>]> {
  let summary = "strided window of a tensor";
  let description = [{
    Result element [i0, i1, ...] is input[offsets[0] + i0 * steps[0], ...]; the
    result type gives the window's size. Steps may be negative (reversal);
    every index the window reads must be inside the input.
  }];
  let arguments = (ins FastNN_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$steps);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FastNN_GatherOp : FastNN_ComputeOp<"gather", [
    AllElementTypesMatch<["input", "result"]>, FastNN_FollowsPrecision]> {
  let summary = "takes slices along `axis` at the given indices";
  let description = [{
    Result shape is input.shape[:axis] + indices.shape + input.shape[axis+1:].
    Negative indices count from the end, as in ONNX.
  }];
  let arguments = (ins FastNN_Tensor:$input, FastNN_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

include "fastnn/Dialect/FastNN/IR/FastNNTrainingOps.td"
include "fastnn/Dialect/FastNN/IR/FastNNLoopOps.td"

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_TD
