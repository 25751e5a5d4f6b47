//===- FastNNTrainingOps.td - ops of the training step -----*- tablegen -*-===//
//
// Ops that fastnn-build-train-step introduces: the training forms of batch
// norm and dropout, backward ops with a runtime kernel or a simple loop,
// loss and metric helpers, and the state updates that end a step.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNTRAININGOPS_TD
#define FASTNN_DIALECT_FASTNN_IR_FASTNNTRAININGOPS_TD

//===----------------------------------------------------------------------===//
// Training forms of forward ops
//===----------------------------------------------------------------------===//

def FastNN_BatchNormTrainOp : FastNN_Op<"batch_norm_train", [Pure,
    DeclareOpInterfaceMethods<FastNN_GradientOpInterface>,
    FastNN_RunsAsKernel, FastNN_FollowsPrecision, FastNN_AcceptsPostOp,
    DeclareOpInterfaceMethods<FastNN_ActivationsOpInterface>,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "batch normalisation with the batch's statistics";
  let description = [{
    Normalises with the mean and biased variance of the batch over every
    dimension but the channel's, and returns them for the running-statistics
    update and the backward pass. Its kernel can apply a relu that alone
    reads the result (`fastnn-plan-fusion`); the relu's gradient still reads
    the relu's output, which is then this op's buffer.
  }];
  let arguments = (ins FastNN_FloatTensor:$input, FastNN_FloatTensor:$scale,
      FastNN_FloatTensor:$bias,
      DefaultValuedAttr<ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>, "1e-5">:$epsilon,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs FastNN_FloatTensor:$result, FastNN_FloatTensor:$mean,
                      FastNN_FloatTensor:$variance);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def FastNN_DropoutTrainOp : FastNN_Op<"dropout_train", [Pure,
    DeclareOpInterfaceMethods<FastNN_GradientOpInterface>,
    FastNN_Elementwise, FastNN_FollowsPrecision,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "training-mode dropout with a counter-based random mask";
  let description = [{
    Keeps each element with probability 1 - ratio and scales kept ones by
    1 / (1 - ratio). The mask is a pure function of (seed, step, element
    index), so the same op applied to the result's gradient drops the same
    elements: the op is its own gradient, and runs are reproducible.
  }];
  let arguments = (ins FastNN_FloatTensor:$input, StaticShapeTensorOf<[I64]>:$step,
      ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>:$ratio, I64Attr:$seed);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input `,` $step attr-dict `:` type($input) `,` type($step)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

def FastNN_Conv2DBackwardOp : FastNN_Op<"conv2d_backward", [Pure,
    FastNN_RunsAsKernel, FastNN_LowPrecision]> {
  let summary = "gradients of conv2d with respect to input, filter and bias";
  let description = [{
    Carries the forward convolution's attributes. `grad_bias` sums
    `grad_output` over every dimension but the channel's.
  }];
  let arguments = (ins FastNN_FloatTensor:$input, FastNN_FloatTensor:$filter,
      FastNN_FloatTensor:$grad_output,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$strides,
      DefaultValuedAttr<FastNN_Quad, "{0, 0, 0, 0}">:$pads,
      DefaultValuedAttr<FastNN_Pair, "{1, 1}">:$dilations,
      DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs FastNN_FloatTensor:$grad_input,
                      FastNN_FloatTensor:$grad_filter,
                      FastNN_FloatTensor:$grad_bias);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def FastNN_Pool2DBackwardOp : FastNN_Op<"pool2d_backward", [Pure,
    FastNN_RunsAsKernel, FastNN_ReusesForwardKernel]> {
  let summary = "gradient of a max or average pooling";
  let description = [{
    `forward_output` is the result of the max_pool2d or avg_pool2d whose
    gradient this is; the op takes the window settings from it (and, for max
    pooling, the runtime takes the argmax the forward kernel saved).
  }];
  let arguments = (ins FastNN_FloatTensor:$forward_output,
                       FastNN_FloatTensor:$grad_output);
  let results = (outs FastNN_FloatTensor:$grad_input);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def FastNN_BatchNormBackwardOp : FastNN_Op<"batch_norm_backward", [Pure,
    FastNN_RunsAsKernel, FastNN_FollowsPrecision,
    DeclareOpInterfaceMethods<FastNN_ActivationsOpInterface>,
    AllTypesMatch<["input", "grad_output", "grad_input"]>,
    AllTypesMatch<["scale", "mean", "variance", "grad_scale", "grad_bias"]>]> {
  let summary = "gradients of batch_norm_train";
  let arguments = (ins FastNN_FloatTensor:$input, FastNN_FloatTensor:$scale,
      FastNN_FloatTensor:$mean, FastNN_FloatTensor:$variance,
      FastNN_FloatTensor:$grad_output,
      DefaultValuedAttr<ConfinedAttr<F64Attr, [FastNN_FloatNonNegative]>, "1e-5">:$epsilon,
      DefaultValuedAttr<FastNN_LayoutAttr, "::mlir::fastnn::Layout::NCHW">:$layout);
  let results = (outs FastNN_FloatTensor:$grad_input,
                      FastNN_FloatTensor:$grad_scale,
                      FastNN_FloatTensor:$grad_bias);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def FastNN_LRNBackwardOp : FastNN_Op<"lrn_backward", [Pure,
    FastNN_RunsAsKernel, FastNN_ReusesForwardKernel,
    AllTypesMatch<["input", "forward_output", "grad_output", "grad_input"]>]> {
  let summary = "gradient of lrn";
  let description = [{
    `forward_output` is the lrn result whose gradient this is; its kernel
    keeps what the backward pass reuses.
  }];
  let arguments = (ins FastNN_FloatTensor:$input,
                       FastNN_FloatTensor:$forward_output,
                       FastNN_FloatTensor:$grad_output);
  let results = (outs FastNN_FloatTensor:$grad_input);
  let assemblyFormat = "operands attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class FastNN_MaskedGradOp<string mnemonic> : FastNN_Op<mnemonic, [Pure,
    AllTypesMatch<["forward", "grad_output", "grad_input"]>,
    FastNN_Elementwise, FastNN_LayoutAgnostic, FastNN_FollowsPrecision]> {
  let results = (outs FastNN_FloatTensor:$grad_input);
  let assemblyFormat = "operands attr-dict `:` type($forward)";
}

def FastNN_ReluBackwardOp : FastNN_MaskedGradOp<"relu_backward"> {
  let summary = "grad_output where the relu's output is positive, else 0";
  let arguments = (ins FastNN_FloatTensor:$forward,
                       FastNN_FloatTensor:$grad_output);
}

def FastNN_LeakyReluBackwardOp : FastNN_MaskedGradOp<"leaky_relu_backward"> {
  let summary = "grad_output where the input is >= 0, else alpha * grad_output";
  let arguments = (ins FastNN_FloatTensor:$forward,
      FastNN_FloatTensor:$grad_output, F64Attr:$alpha);
}

def FastNN_ClipBackwardOp : FastNN_MaskedGradOp<"clip_backward"> {
  let summary = "grad_output where min < forward < max, else 0 (TF's relu6 "
                "rule)";
  let description = [{
    `forward` is the clip's output (the gradient builds it so) or its input:
    either is strictly inside (min, max) exactly where the other is.
  }];
  let arguments = (ins FastNN_FloatTensor:$forward,
      FastNN_FloatTensor:$grad_output, F64Attr:$min, F64Attr:$max);
}

def FastNN_SignOp : FastNN_SameTypeOp<"sign", [FastNN_Elementwise,
    FastNN_LayoutAgnostic]> {
  let description = [{ Its gradient is zero almost everywhere. }];
  let summary = "-1, 0 or 1 by the sign of x";
  let arguments = (ins FastNN_FloatTensor:$input);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def FastNN_BroadcastOp : FastNN_Op<"broadcast", [Pure,
    SameOperandsAndResultElementType, FastNN_Elementwise,
    FastNN_FollowsPrecision,
    DeclareOpInterfaceMethods<FastNN_GradientOpInterface>]> {
  let summary = "numpy-broadcasts the input to the result's shape";
  let description = [{
    Made by gradients of reductions, and by ONNX Expand and Tile.
  }];
  let arguments = (ins FastNN_Tensor:$input);
  let results = (outs FastNN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Loss and metrics
//===----------------------------------------------------------------------===//

def FastNN_OneHotOp : FastNN_Op<"one_hot", [Pure]> {
  let summary = "1.0 at each label's class, 0.0 elsewhere";
  let description = [{
    `labels` of shape [N] (class indices) gives a float [N, classes] result.
    A label outside [0, classes) gives a zero row.
  }];
  let arguments = (ins FastNN_IndexTensor:$labels);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` type($labels) `->` type($result)";
  let hasVerifier = 1;
}

def FastNN_InTopKOp : FastNN_Op<"in_top_k", [Pure]> {
  let summary = "1.0 where the label's logit is among the k largest";
  let description = [{
    As tf.nn.in_top_k: for each row, the label counts as within the top k
    when fewer than k logits are strictly larger than its own.
  }];
  let arguments = (ins FastNN_FloatTensor:$logits, FastNN_IndexTensor:$labels,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k);
  let results = (outs FastNN_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// State updates (the end of a training step)
//===----------------------------------------------------------------------===//

def FastNN_UpdateStateOp : FastNN_Op<"update_state", [
    MemoryEffects<[MemWrite]>, AllTypesMatch<["state", "value"]>]> {
  let summary = "overwrites a parameter's value (e.g. running statistics)";
  let description = [{
    `state` must be read by fastnn.param; after the op, that parameter holds
    `value`. Reads of the parameter must come before the op.
  }];
  let arguments = (ins FastNN_FloatTensor:$state, FastNN_FloatTensor:$value);
  let assemblyFormat = "$value `into` $state attr-dict `:` type($state)";
  let hasVerifier = 1;
}

def FastNN_ApplyOptimizerOp : FastNN_Op<"apply_optimizer", [
    MemoryEffects<[MemWrite]>, AttrSizedOperandSegments, FastNN_RunsAsKernel]> {
  let summary = "one optimizer update of a parameter and its slots, in place";
  let description = [{
    TensorFlow 1.x tf.train semantics (runtime/.../abi.h lists each rule's
    slots). `param` and `slots` must be read by fastnn.param; `step` is the
    1-based update count. With `if %apply` (a scalar i1) the update happens
    only where it is true: dynamic loss scaling skips the steps whose
    gradients overflowed. The gradient has the parameter's type, or is bf16
    for an f32 parameter (a mixed-precision step's, widened exactly as the
    update reads it).

    ```mlir
    fastnn.apply_optimizer <momentum> %w, %dw, %lr, %step, %w_slot0 if %finite
        : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<i64>, tensor<4x3xf32>, tensor<i1>) -> ()
    ```
  }];
  let arguments = (ins FastNN_FloatTensor:$param, FastNN_FloatTensor:$grad,
      StaticShapeTensorOf<[F32]>:$learning_rate,
      StaticShapeTensorOf<[I64]>:$step, Variadic<FastNN_FloatTensor>:$slots,
      Optional<StaticShapeTensorOf<[I1]>>:$apply,
      FastNN_OptimizerAttr:$optimizer,
      DefaultValuedAttr<F64Attr, "0.9">:$momentum,
      UnitAttr:$use_nesterov,
      DefaultValuedAttr<F64Attr, "0.95">:$rho,
      DefaultValuedAttr<F64Attr, "0.9">:$beta1,
      DefaultValuedAttr<F64Attr, "0.999">:$beta2,
      DefaultValuedAttr<F64Attr, "1.0">:$epsilon,
      DefaultValuedAttr<F64Attr, "0.9">:$decay,
      DefaultValuedAttr<F64Attr, "0.1">:$initial_accumulator_value,
      DefaultValuedAttr<F64Attr, "-0.5">:$learning_rate_power,
      DefaultValuedAttr<F64Attr, "0.0">:$l1,
      DefaultValuedAttr<F64Attr, "0.0">:$l2,
      DefaultValuedAttr<F64Attr, "0.0">:$weight_decay_rate);
  let assemblyFormat = [{
    $optimizer $param `,` $grad `,` $learning_rate `,` $step (`,` $slots^)?
    (`if` $apply^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of slots each rule keeps (see abi.h).
    static int64_t slotCount(Optimizer optimizer);
    /// Initial value of slot `index` of `optimizer` given its settings.
    static double slotInitialValue(Optimizer optimizer, int64_t index,
                                   double initialAccumulatorValue);
  }];
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

def FastNN_AllReduceOp : FastNN_Op<"allreduce", [
    MemoryEffects<[MemRead, MemWrite]>, InferTypeOpAdaptor]> {
  let summary = "sums or averages tensors over the workers of a data-parallel job";
  let description = [{
    Every worker (process) of the job runs the same step on its own share of
    the batch. Each result is the elementwise sum (`sum`) or mean (`mean`)
    over the workers of the corresponding input; with one worker it equals
    the input.

    All inputs of one op travel in one collective call over one buffer that
    holds them back to back, in order (a bucket, see
    fastnn-fuse-allreduce), so they share one element type. Workers must
    issue their collectives in the same order; they do because they run the
    same compiled step, and the op's side effects keep passes from
    removing, merging or reordering it. The lowering starts the collective
    where the op stands and waits for it right before the first use of a
    result, so the communication overlaps the work in between.

    ```mlir
    %gw, %gb = fastnn.allreduce mean %dw, %db : tensor<4x3x3x3xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<FastNN_FloatTensor>:$inputs,
                       FastNN_AllReduceKindAttr:$kind);
  let results = (outs Variadic<FastNN_FloatTensor>:$results);
  let assemblyFormat = "`` $kind $inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

def FastNN_AllFiniteOp : FastNN_Op<"all_finite", [Pure]> {
  let summary = "true when no element of any operand is infinite or NaN";
  let description = [{
    The overflow check of dynamic loss scaling, over every gradient the
    optimizer would apply.

    ```mlir
    %finite = fastnn.all_finite %dw1, %dw2 : tensor<4x3xf32>, tensor<4xf32> -> tensor<i1>
    ```
  }];
  let arguments = (ins Variadic<FastNN_FloatTensor>:$inputs);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def FastNN_UpdateLossScaleOp : FastNN_Op<"update_loss_scale", [Pure,
    AllTypesMatch<["scale", "good_steps", "new_scale", "new_good_steps"]>]> {
  let summary = "the next dynamic loss scale and count of finite steps";
  let description = [{
    The rule of TensorFlow's dynamic loss scale (and PyTorch's GradScaler):
    after a step whose gradients were all finite the count grows by one, and
    when it reaches `growth_interval` the scale is multiplied by `factor` and
    the count restarts; after an overflow the scale is divided by `factor`
    (never below 1, as TensorFlow 1's ExponentialUpdateLossScaleManager) and
    the count restarts. `scale` and `good_steps` are f32 scalars (counts up
    to 2^24 are exact).

    ```mlir
    %s2, %n2 = fastnn.update_loss_scale %s, %n, %finite {growth_interval = 2000 : i64, factor = 2.0 : f64}
        : tensor<f32>, tensor<i1>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$scale,
      StaticShapeTensorOf<[F32]>:$good_steps,
      StaticShapeTensorOf<[I1]>:$finite,
      ConfinedAttr<I64Attr, [IntPositive]>:$growth_interval,
      F64Attr:$factor);
  let results = (outs StaticShapeTensorOf<[F32]>:$new_scale,
                      StaticShapeTensorOf<[F32]>:$new_good_steps);
  let assemblyFormat = [{
    $scale `,` $good_steps `,` $finite attr-dict `:` type($scale) `,` type($finite)
  }];
  let hasVerifier = 1;
}

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNTRAININGOPS_TD
