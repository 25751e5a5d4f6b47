//===- Passes.td - fastnn compiler passes ------------------*- tablegen -*-===//

#ifndef FASTNN_TRANSFORMS_PASSES_TD
#define FASTNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FastNNBuildTrainStep : Pass<"fastnn-build-train-step", "mlir::ModuleOp"> {
  let summary = "Turn an imported forward function into one training step";
  let description = [{
    Accepts a module with `fastnn.parameter`s and a function `@forward`
    taking the images and returning the logits (and, for inception models,
    the auxiliary logits second). Rewrites it into `@train_step(images,
    labels, learning_rate, step) -> (loss, top1, top5)`:

    - batch norm normalises with batch statistics (`batch_norm_train`) and
      updates the running mean and variance with the op's momentum (ONNX's
      convention: running = momentum * running + (1 - momentum) * batch; the
      variance uses Bessel's correction, as TensorFlow's fused batch norm);
    - dropout draws a counter-based mask from (seed, step, element);
    - the loss is softmax cross-entropy of the logits against the labels,
      averaged over the batch, plus `aux-loss-weight` times the same for the
      auxiliary logits, plus weight_decay * sum(w^2) / 2 over convolution
      filters and matrix-product weights (not biases, not batch-norm
      parameters); adamweightdecay decays decoupled in its update instead;
    - gradients come from reverse-mode differentiation through each op's
      GradientOpInterface; a weight's decay term joins its gradient right
      where the backward pass completes it (clipping is
      `fastnn-clip-gradients`, after any allreduce of the gradients);
    - each trainable parameter is updated by `apply_optimizer` with new
      optimizer slot parameters (role `slot`) initialised as tf.train does;
    - top-1 and top-5 accuracy of the batch are returned beside the loss;
    - loss scaling (for half-precision training, `fastnn-mixed-precision`):
      with `loss-scale` S != 1 the backward pass starts from S instead of 1
      and each gradient is divided by S where the backward pass completes
      it, before weight decay, allreduce and clipping (TF's
      LossScaleOptimizer: small half-precision gradients do not flush to
      zero). With `dynamic-loss-scale` S is state, a `slot` parameter
      `loss_scale` starting at `loss-scale`, which the step names in its
      `fastnn.loss_scale` attribute; `fastnn-dynamic-loss-scale` then adapts
      it.

    State updates come last, after every read of the parameters.

    Before:
    ```mlir
    func.func @forward(%images: tensor<8x1x28x28xf32>) -> tensor<8x10xf32>
    ```
    After:
    ```mlir
    func.func @train_step(%images: tensor<8x1x28x28xf32>, %labels: tensor<8xi64>,
                          %learning_rate: tensor<f32>, %step: tensor<i64>)
        -> (tensor<f32>, tensor<f32>, tensor<f32>) {
      ...forward, loss, backward...
      fastnn.apply_optimizer <momentum> %w, %dw, %learning_rate, %step, %w_slot0 ...
      return %loss, %top1, %top5
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"optimizer", "optimizer", "::mlir::fastnn::Optimizer",
           "::mlir::fastnn::Optimizer::RMSProp",
           "adadelta, adagrad, adam, ftrl, momentum, sgd, rmsprop or adamweightdecay",
           "::fastnn::OptimizerValues()">,
    Option<"weightDecay", "weight-decay", "double", "0.00004",
           "L2 coefficient on convolution and matrix-product weights">,
    Option<"auxLossWeight", "aux-loss-weight", "double", "0.4",
           "Weight of the auxiliary logits' loss">,
    Option<"dropoutSeed", "dropout-seed", "int64_t", "0",
           "Seed of the dropout masks">,
    Option<"momentum", "momentum", "double", "0.9", "Momentum of momentum">,
    Option<"useNesterov", "use-nesterov", "bool", "false", "Nesterov momentum">,
    Option<"rmspropMomentum", "rmsprop-momentum", "double", "0.9", "RMSProp momentum">,
    Option<"rmspropDecay", "rmsprop-decay", "double", "0.9", "RMSProp decay">,
    Option<"adamBeta1", "adam-beta1", "double", "0.9", "Adam first-moment decay">,
    Option<"adamBeta2", "adam-beta2", "double", "0.999", "Adam second-moment decay">,
    Option<"optEpsilon", "opt-epsilon", "double", "1.0",
           "Optimizer epsilon (TF-slim's default 1.0)">,
    Option<"adadeltaRho", "adadelta-rho", "double", "0.95", "Adadelta decay">,
    Option<"adagradInitialAccumulatorValue", "adagrad-initial-accumulator-value",
           "double", "0.1", "Adagrad accumulator start">,
    Option<"ftrlLearningRatePower", "ftrl-learning-rate-power", "double", "-0.5",
           "FTRL learning-rate power">,
    Option<"ftrlInitialAccumulatorValue", "ftrl-initial-accumulator-value",
           "double", "0.1", "FTRL accumulator start">,
    Option<"ftrlL1", "ftrl-l1", "double", "0.0", "FTRL L1">,
    Option<"ftrlL2", "ftrl-l2", "double", "0.0", "FTRL L2">,
    Option<"lossScale", "loss-scale", "double", "1.0",
           "Loss scale (the initial one with dynamic-loss-scale)">,
    Option<"dynamicLossScale", "dynamic-loss-scale", "bool", "false",
           "Keep the loss scale as state, for fastnn-dynamic-loss-scale">
  ];
}

def FastNNBuildEvalStep : Pass<"fastnn-build-eval-step", "mlir::ModuleOp"> {
  let summary = "Turn an imported forward function into one evaluation step";
  let description = [{
    Accepts what `fastnn-build-train-step` accepts: `@forward` taking the
    images and returning the logits (and, for inception models, auxiliary
    logits, which evaluation ignores). Rewrites it into
    `@eval_step(images, labels) -> (loss, top1, top5)` where every result
    has one value per sample, so that a caller can count a last partial
    batch exactly:

    - `loss`: the softmax cross-entropy of the sample's logits against its
      label, computed in float32 (half-precision logits are widened);
    - `top1`, `top5`: 1.0 where the label is among the 1 (5) largest logits,
      else 0.0, as tf.nn.in_top_k; with fewer than 5 classes top5 counts all
      of them, as in the training step.

    The forward graph keeps its inference semantics: batch norm normalises
    with the running statistics and dropout is the identity. Nothing is
    differentiated and no parameter is written; ops and parameters that
    only fed the auxiliary logits are removed. Arguments and results are
    named (`fastnn.name`) "images", "labels", "loss", "top1" and "top5".

    Before:
    ```mlir
    func.func @forward(%images: tensor<8x1x28x28xf32>) -> tensor<8x10xf32>
    ```
    After:
    ```mlir
    func.func @eval_step(%images: tensor<8x1x28x28xf32>, %labels: tensor<8xi64>)
        -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      ...forward...
      %p = fastnn.log_softmax %logits ...
      %loss = fastnn.neg (fastnn.reduce_sum (one_hot(%labels) * %p) axes [1])
      %top1 = fastnn.in_top_k %logits, %labels {k = 1}
      %top5 = fastnn.in_top_k %logits, %labels {k = 5}
      return %loss, %top1, %top5
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::fastnn::FastNNDialect"];
}

def FastNNDataParallel : Pass<"fastnn-data-parallel", "mlir::ModuleOp"> {
  let summary = "Average the gradients and the step's metrics over the "
                "workers of a data-parallel job";
  let description = [{
    Accepts a training step (the output of `fastnn-build-train-step`): a
    function whose `apply_optimizer` ops update the parameters. Makes it the
    step of one worker of a data-parallel job, where every worker (a process
    that mpirun launched) holds the same parameters and runs the step on
    its own share of the global batch:

    - each `apply_optimizer`'s gradient becomes its `allreduce mean` over
      the workers, placed right after the op that completes the gradient,
      so that the communication can start while the backward pass goes on.
      With equal shares, the mean of the workers' gradients of their mean
      losses is the gradient of the global batch's mean loss: K workers of
      batch b follow the trajectory of one worker of batch K * b;
    - the function's float results (the step's loss, top-1 and top-5) are
      averaged the same way, in one `allreduce mean` before the return, so
      that every worker reports the global batch's values (the Ascend
      port's allreduce / rank_size);
    - batch norm stays per worker: it normalises with the worker's batch
      and `update_state` keeps the worker's own running averages, as
      TensorFlow's replicated training (PAI-Soar, Horovod) does.

    With one worker every allreduce is the identity, so the pass is applied
    whether or not the job turns out to be distributed. Gradients and
    results an allreduce already produces are left alone. Clipping by the
    global norm (`fastnn-clip-gradients`) comes after this pass, so that
    every worker clips the same averaged gradients.

    Before:
    ```mlir
    %dw = ...                          // the backward pass completes dw
    ...
    fastnn.apply_optimizer sgd %w, %dw, %lr, %step : ...
    return %loss, %top1, %top5 : tensor<f32>, tensor<f32>, tensor<f32>
    ```
    After:
    ```mlir
    %dw = ...
    %dw_mean = fastnn.allreduce mean %dw : tensor<4x3x3x3xf32>
    ...
    fastnn.apply_optimizer sgd %w, %dw_mean, %lr, %step : ...
    %m:3 = fastnn.allreduce mean %loss, %top1, %top5 : tensor<f32>, tensor<f32>, tensor<f32>
    return %m#0, %m#1, %m#2 : tensor<f32>, tensor<f32>, tensor<f32>
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
}

def FastNNClipGradients : Pass<"fastnn-clip-gradients", "mlir::ModuleOp"> {
  let summary = "Scale the optimizer's gradients to at most a global norm "
                "(tf.clip_by_global_norm)";
  let description = [{
    Accepts a training step (the output of `fastnn-build-train-step`, and
    of `fastnn-data-parallel` when the gradients are averaged over
    workers). The global norm is the square root of the sum of every
    squared element of every `apply_optimizer` gradient; each gradient g
    becomes g * max-norm / max(norm, max-norm), as tf.clip_by_global_norm
    computes it. The norm and the scaling are inserted right before the
    first `apply_optimizer`, after every gradient (and its allreduce) is
    complete. `max-norm` <= 0 leaves the step unchanged.

    Before:
    ```mlir
    fastnn.apply_optimizer sgd %w, %dw, %lr, %step : ...
    fastnn.apply_optimizer sgd %b, %db, %lr, %step : ...
    ```
    After (max-norm=5):
    ```mlir
    %norm = fastnn.sqrt (sum(%dw * %dw) + sum(%db * %db))
    %factor = fastnn.div %c5, (fastnn.max %norm, %c5)
    %dw_clipped = fastnn.mul %dw, %factor
    %db_clipped = fastnn.mul %db, %factor
    fastnn.apply_optimizer sgd %w, %dw_clipped, %lr, %step : ...
    fastnn.apply_optimizer sgd %b, %db_clipped, %lr, %step : ...
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"maxNorm", "max-norm", "double", "0.0",
           "Clip the gradients to this global norm (<= 0: no clipping)">
  ];
}

def FastNNFuseAllReduce : Pass<"fastnn-fuse-allreduce", "mlir::ModuleOp"> {
  let summary = "Group allreduces into buckets of up to bucket-bytes";
  let description = [{
    One collective call per gradient pays the network's latency once per
    parameter tensor (resnet_v1_50 has 161 of them, mobilenet_v2 158). The
    pass groups `fastnn.allreduce` ops into buckets, each one `allreduce`
    of several tensors; the lowering lays a bucket's tensors out back to
    back in the arena, where the ops producing them write, so that one
    in-place collective covers the bucket without a packing copy.

    Walks each block's allreduces in block order, which after
    `fastnn-data-parallel` is the order in which the backward pass
    completes the gradients, and keeps one open bucket per kind and
    element type (under mixed precision, low and f32 gradients arrive in
    turn): an allreduce joins the open bucket of its kind and element type
    when the bucket stays within `bucket-bytes`, otherwise it closes that
    bucket and opens the next; a bucket also closes at the first op that
    uses one of its results. An allreduce larger than `bucket-bytes` makes a bucket
    alone, and `bucket-bytes=0` leaves every allreduce alone. The fused op
    stands where the bucket's last allreduce stood (named `bucket<i>` for
    timelines), so that a bucket's collective starts as soon as its last
    tensor is complete and overlaps the rest of the backward pass.

    Before (bucket-bytes=1024):
    ```mlir
    %a = fastnn.allreduce mean %da : tensor<64xf32>       // 256 bytes
    ...
    %b = fastnn.allreduce mean %db : tensor<128xf32>      // 512 bytes
    ...
    %c = fastnn.allreduce mean %dc : tensor<256xf32>      // 1024 bytes
    ```
    After:
    ```mlir
    ...
    %ab:2 = fastnn.allreduce mean %da, %db : tensor<64xf32>, tensor<128xf32>
    ...
    %c = fastnn.allreduce mean %dc : tensor<256xf32>
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", "26214400",
           "Largest bucket in bytes (0: one collective per allreduce)">
  ];
}

def FastNNDynamicLossScale : Pass<"fastnn-dynamic-loss-scale",
                                  "mlir::ModuleOp"> {
  let summary = "Skip the updates of steps whose gradients overflow and "
                "adapt the loss scale";
  let description = [{
    Accepts a training step whose `fastnn.loss_scale` attribute names its
    loss-scale state (`fastnn-build-train-step` with `dynamic-loss-scale`),
    after any pass that changes the gradients `apply_optimizer` receives
    (`fastnn-data-parallel`, `fastnn-clip-gradients`), so that every worker
    sees the same averaged gradients and makes the same decision. Other
    functions are left alone. Right before the first `apply_optimizer`:

    - `fastnn.all_finite` checks every gradient the optimizer would apply;
      each `apply_optimizer` then runs only `if` they are all finite;
    - `fastnn.update_loss_scale` gives the next scale, TensorFlow's dynamic
      loss scale rule: doubled after `growth-interval` finite steps in a
      row, halved (never below 1) after an overflow; the count of finite
      steps is a second `slot` parameter, `<scale>.good_steps`;
    - the step returns two more results: `loss_scale`, the scale the next
      step uses, and `skipped`, 1.0 when this step applied no update.

    Before:
    ```mlir
    func.func @train_step(...) -> (tensor<f32>, tensor<f32>, tensor<f32>)
        attributes {fastnn.loss_scale = @loss_scale} {
      %s = fastnn.param @loss_scale : tensor<f32>
      ...backward pass from %s, gradients divided by %s...
      fastnn.apply_optimizer sgd %w, %dw, %lr, %step : ...
      return %loss, %top1, %top5
    }
    ```
    After:
    ```mlir
      %n = fastnn.param @loss_scale.good_steps : tensor<f32>
      ...
      %finite = fastnn.all_finite %dw : tensor<4x3xf32> -> tensor<i1>
      %s2, %n2 = fastnn.update_loss_scale %s, %n, %finite {growth_interval = 2000 : i64, factor = 2.0 : f64} : tensor<f32>, tensor<i1>
      fastnn.update_state %s2 into %s : tensor<f32>
      fastnn.update_state %n2 into %n : tensor<f32>
      fastnn.apply_optimizer sgd %w, %dw, %lr, %step if %finite : ...
      return %loss, %top1, %top5, %s2, %skipped
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"growthInterval", "growth-interval", "int64_t", "2000",
           "Finite steps in a row after which the loss scale doubles">
  ];
}

def FastNNMixedPrecision : Pass<"fastnn-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Compute convolutions and matrix products in bf16 or f16";
  let description = [{
    Accepts any function of fastnn ops (usually the step of
    `fastnn-build-train-step`, whose loss scaling half-precision training
    wants) and assigns element types as TensorFlow's automatic mixed
    precision does, by the ops' traits (FastNNInterfaces.td):

    - always low (`precision`), ops with `LowPrecision`: `conv2d`,
      `conv2d_backward`, `matmul`; their f32 operands are cast to the low
      type and their results cast back;
    - low when their inputs are, ops with `FollowsPrecision`: activations,
      pooling and their gradients, elementwise `add`/`sub`/`mul`/`neg`, data
      movement (`reshape`, `transpose`, `concat`, `pad`, `slice`,
      `broadcast`, `gather`), dropout, and batch norm in all three forms with
      its activations only (its `ActivationsOpInterface`): `scale`, `bias`
      and the batch and running statistics stay f32 (and so do the scale and
      bias gradients);
    - always f32, ops with neither trait: in particular softmax and the loss
      (logits are widened, as the seed's `tf.cast(logits, tf.float32)`),
      reductions, LRN, metrics, the optimizer and state updates.

    Parameters stay f32: they are the master weights the optimizer updates
    in f32; a step reads each once and casts it to the low type once for
    all its convolution and matrix-product uses (forward and backward).
    Every f32 value is cast to the low type at most once, right after its
    definition; a cast of a widened value uses the original instead, and
    casts left without users are erased, so between two low ops no cast
    remains. The function's signature does not change. `fp32` leaves the
    IR as it is.

    Last, an `allreduce mean` of one gradient widened from the low type and
    then only scaled or shifted by values every worker shares (built from
    parameters and constants: the loss scale's factor, weight decay) moves
    onto the low value, right where it is complete, and those f32 steps
    repeat on its mean before the first reader: the gradient travels in the
    low type, still loss-scaled, and what reads the mean (the overflow
    check) sees the reduced values. An `apply_optimizer` whose gradient is
    a cast from bf16 reads the bf16 gradient itself (its kernel widens it
    exactly as it reads), without the f32 copy; f16 gradients reach the
    update through the loss scale's division and stay f32.

    Before:
    ```mlir
    %w = fastnn.param @conv.weight : tensor<8x3x3x3xf32>
    %c = fastnn.conv2d %x, %w : (tensor<4x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x6x6xf32>
    %r = fastnn.relu %c : tensor<4x8x6x6xf32>
    ```
    After (`precision=bf16`):
    ```mlir
    %w = fastnn.param @conv.weight : tensor<8x3x3x3xf32>
    %w16 = fastnn.cast %w {to = bf16} : tensor<8x3x3x3xf32> -> tensor<8x3x3x3xbf16>
    %x16 = fastnn.cast %x {to = bf16} : tensor<4x3x8x8xf32> -> tensor<4x3x8x8xbf16>
    %c = fastnn.conv2d %x16, %w16 : (...bf16...) -> tensor<4x8x6x6xbf16>
    %r = fastnn.relu %c : tensor<4x8x6x6xbf16>
    %r32 = fastnn.cast %r {to = f32} : tensor<4x8x6x6xbf16> -> tensor<4x8x6x6xf32>
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"precision", "precision", "::fastnn::Precision",
           "::fastnn::Precision::BF16",
           "Type of the low-precision ops: bf16, fp16 or fp32 (no change)",
           "::fastnn::precisionValues()">
  ];
}

def FastNNSinkLoop : Pass<"fastnn-sink-loop", "mlir::ModuleOp"> {
  let summary = "Run N training steps per call in a compiled loop that "
                "fetches its own batches (iterations_per_loop)";
  let description = [{
    Accepts the training step (`entry`, @train_step by default) with its
    inputs named `images`, `labels`, `learning_rate` (f32 scalar) and `step`
    (i64 scalar) and scalar results, as `fastnn-build-train-step` and the
    passes after it leave it. With `iterations` N > 1 the whole step becomes
    the body of a `fastnn.loop` of N iterations (FastNN's and TPUEstimator's
    iterations_per_loop), so that the trainer enters compiled code once per
    N steps:

    - each iteration fetches its batch with `fastnn.next_batch` into the
      `images` and `labels` buffers (the runtime's `fnn_input_next`, fed by
      the trainer's prefetching pipeline);
    - `learning_rate` becomes a tensor of N rates, one per iteration (the
      trainer computes the schedule), and iteration i runs as step
      `step + i`;
    - every result becomes a tensor of N values, iteration i's at index i.

    Parameter reads and updates stay inside the body, so every iteration
    sees the previous one's updates. N = 1 leaves the step unchanged.
    Because the trainer only regains control between loops, it can stop,
    save checkpoints, evaluate and write timelines only at loop boundaries
    (Hparams::validate checks the step counts).

    Before:
    ```mlir
    func.func @train_step(%images: tensor<8x1x28x28xf32>, %labels: tensor<8xi64>,
                          %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, ...) {
      ...step on %images, %labels, %lr, %step...
      return %loss, ...
    }
    ```
    After (iterations=4):
    ```mlir
    func.func @train_step(%images: tensor<8x1x28x28xf32>, %labels: tensor<8xi64>,
                          %lr: tensor<4xf32>, %step: tensor<i64>) -> (tensor<4xf32>, ...) {
      %all:3 = fastnn.loop 4 iterations {
      ^bb0(%i: tensor<i64>):
        %x, %y = fastnn.next_batch %images, %labels : ...
        %lr_i = fastnn.gather %lr, %i {axis = 0 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<f32>
        %step_i = fastnn.add %step, %i : (tensor<i64>, tensor<i64>) -> tensor<i64>
        ...step on %x, %y, %lr_i, %step_i...
        fastnn.loop_yield %loss, ... : tensor<f32>, ...
      } : tensor<4xf32>, ...
      return %all#0, ...
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"iterations", "iterations", "int64_t", "1",
           "Training steps per call (iterations_per_loop)">,
    Option<"entryName", "entry", "std::string", "\"train_step\"",
           "Name of the training-step function">
  ];
}

def FastNNRandomMasks : Pass<"fastnn-random-masks", "mlir::ModuleOp"> {
  let summary = "Turn cast comparisons of uniform draws with a constant into "
                "random masks";
  let description = [{
    Today's exporters write dropout and stochastic depth in training mode as
    a uniform draw compared with a constant and cast to a float mask
    (PyTorch's default exporter: RandomUniformLike, Less, Cast, then the
    division by the keep probability and the product). Such a mask is a
    Bernoulli draw whose probability the pass computes from the draw's
    bounds and the constant; as `random_mask` it still draws in training
    (fastnn-build-train-step gives it the step) and is its mean at
    inference, so the network computes its expectation over the masks, as
    `dropout` and a framework's eval mode do. The draw must feed the
    comparison alone, and the comparison the cast alone, with the mask's
    shape; other draws are left as they are.

    Before:
    ```mlir
    %u = fastnn.random_uniform {seed = 7 : i64} : tensor<2x1x1x1xf32>
    %p = fastnn.constant dense<8.0e-01> : tensor<f32>
    %b = fastnn.less %u, %p : (tensor<2x1x1x1xf32>, tensor<f32>) -> tensor<2x1x1x1xi1>
    %m = fastnn.cast %b : tensor<2x1x1x1xi1> -> tensor<2x1x1x1xf32>
    ```
    After:
    ```mlir
    %m = fastnn.random_mask {probability = 8.0e-01 : f64, seed = 7 : i64} : tensor<2x1x1x1xf32>
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
}

def FastNNFoldBatchNorm : Pass<"fastnn-fold-batch-norm", "mlir::ModuleOp"> {
  let summary = "Fold inference batch norm into the preceding convolution's "
                "filter and bias";
  let description = [{
    For inference models only (`fastnnc --mode=infer`): training normalises
    with the batch's statistics and updates the running ones, so the
    training and evaluation steps keep their `batch_norm`. A `batch_norm`
    whose input is a `conv2d` read by it alone, of the same layout, whose
    filter, bias (if any), scale, shift, mean and variance are parameter
    reads or constants, all float32, becomes that convolution with
    `a = scale / sqrt(variance + epsilon)` folded in: the filter times `a`
    along O (its first dimension in OIHW and OHWI), the bias
    `(bias - mean) * a + shift` (`shift - mean * a` without one). The new
    ops read parameters only, so an inference step computes them on its
    first run (`fastnn-lower-to-runtime`), and the convolution then takes a
    following relu as its post-op. This is ONNX Runtime's and TensorRT's
    Conv+BatchNormalization fusion; other batch norms are left as they are.

    Before:
    ```mlir
    %c = fastnn.conv2d %x, %w : ... -> tensor<8x16x32x32xf32>
    %y = fastnn.batch_norm %c, %s, %t, %m, %v {epsilon = 1.0e-3 : f64} : ...
    ```
    After:
    ```mlir
    %e = fastnn.constant dense<1.0e-3> : tensor<f32>
    %a = fastnn.div %s, (fastnn.sqrt (fastnn.add %v, %e))
    %ac = fastnn.reshape %a : tensor<16xf32> -> tensor<16x1x1x1xf32>
    %wf = fastnn.mul %w, %ac
    %bf = fastnn.sub %t, (fastnn.mul %m, %a)
    %y = fastnn.conv2d %x, %wf, %bf : ... -> tensor<8x16x32x32xf32>
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
}

def FastNNLayout : Pass<"fastnn-layout", "mlir::ModuleOp"> {
  let summary = "Give convolutions, pooling and batch norm the target's "
                "layout and fold the transposes away";
  let description = [{
    Accepts any module of fastnn ops; meant for the imported forward graph,
    before `fastnn-build-train-step`, whose gradient ops then inherit the
    layouts. The layout the target's kernels want (`layout=auto`):

    - `cpu`: NHWC. oneDNN's brgconv convolutions read and write it as it
      is; on NCHW every call reorders its input and output to and from a
      channel-blocked layout (resnet_v1_50 inference: ~13% of its time).
    - `cuda`: NHWC with `precision` fp16 or bf16 (cuDNN's tensor-core
      convolutions), NCHW with fp32.

    `layout=nchw` or `layout=nhwc` overrides the choice.

    Every rank-4 `conv2d`, `max_pool2d`, `avg_pool2d` and `batch_norm` of
    another layout gets the wanted one, its input (and a convolution's
    filter, OIHW <-> OHWI) transposed in and its result transposed back.
    Then transposes move through the ops that do not depend on the layout
    (elementwise ops whose tensor operands are transposed alike, casts,
    dropout, concatenations and padding, which take the matching axis) and
    fold into reductions whose kept dimensions stay in order, until they
    meet and cancel (`transpose` composes with `transpose`). A transpose
    that a function input only feeds becomes the input: whoever fills it
    writes that layout (`input-layout=kernels`). With `input-layout=model`
    the inputs keep their declared layout, with `reads` the layout the
    model's own transposes read them in (taken before the assignment):
    then one transpose of each image input may stay. So an ONNX model in
    TensorFlow's NHWC style (tf2onnx's Transpose -> Conv -> Transpose)
    keeps no transpose at all for `cpu`, and an NCHW one only its input's
    when the input keeps NCHW.

    Before (`target=cpu`, an NCHW import):
    ```mlir
    func.func @forward(%x: tensor<8x3x32x32xf32>) -> tensor<8x16xf32> {
      %c = fastnn.conv2d %x, %w : ... -> tensor<8x16x32x32xf32>
      %r = fastnn.relu %c
      %p = fastnn.pad %r {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : ...
      %m = fastnn.reduce_mean %p {axes = array<i64: 2, 3>} : tensor<8x16x34x34xf32> -> tensor<8x16xf32>
      return %m
    }
    ```
    After (`input-layout=model`):
    ```mlir
    func.func @forward(%x: tensor<8x3x32x32xf32>) -> tensor<8x16xf32> {
      %t = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : ...
      %f = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : ...
      %c = fastnn.conv2d %t, %f {layout = #fastnn.layout<nhwc>} : ... -> tensor<8x32x32x16xf32>
      %r = fastnn.relu %c
      %p = fastnn.pad %r {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>} : ...
      %m = fastnn.reduce_mean %p {axes = array<i64: 1, 2>} : tensor<8x34x34x16xf32> -> tensor<8x16xf32>
      return %m
    }
    ```
  }];
  let dependentDialects = ["mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"target", "target", "::fastnn::Target", "::fastnn::Target::CPU",
           "Kernels the model runs on: cpu (oneDNN) or cuda (cuDNN)",
           "::fastnn::targetValues()">,
    Option<"precision", "precision", "::fastnn::Precision",
           "::fastnn::Precision::FP32",
           "Type of the convolutions (fastnn-mixed-precision's): fp32, fp16 "
           "or bf16", "::fastnn::precisionValues()">,
    Option<"layout", "layout", "::fastnn::LayoutChoice",
           "::fastnn::LayoutChoice::Auto",
           "Layout to give the ops: auto (the target's choice above), "
           "nchw or nhwc", "::fastnn::layoutValues()">,
    Option<"inputLayout", "input-layout", "::fastnn::InputLayout",
           "::fastnn::InputLayout::Kernels",
           "Layout of the function inputs: kernels (the one their first "
           "ops take after the pass; whoever fills an input writes it), "
           "model (as declared: infer.bin's .npy files) or reads (the one "
           "the model's own ops read them in, NCHW for tf2onnx's NHWC "
           "inputs: train.bin's NCHW loader)",
           "::fastnn::inputLayoutValues()">
  ];
}

def FastNNRematerialize : Pass<"fastnn-rematerialize", "mlir::ModuleOp"> {
  let summary = "Recompute stored activations in the backward pass until the "
                "step's arena fits a memory budget (memory_budget_mb)";
  let description = [{
    Accepts the training step (`entry`) as the step pipeline leaves it,
    before `fastnn-plan-fusion`, and a budget of `budget-bytes` (0: none).
    While the arena `fastnn-lower-to-runtime` would plan (after the fusion
    `max-loop-reduction` gives; it counts parameters, optimizer slots and
    gradients too) exceeds the budget, it finds the op where the buffers
    alive together peak and recomputes some values that are alive across it
    without being read there: their readers after the peak read a copy of
    the value's producer placed right before the first of them, so the
    stored value dies at its last read before the peak. Then it plans again.

    - Choice by cost: bytes freed at the peak per recomputed multiply-add.
      A value whose producer's operands are dead at the peak recomputes
      them too (a relu from its batch norm from the convolution's stored
      output), and pays for an operand it has to keep alive instead. So
      elementwise results (relu, residual adds, dropout) and batch-norm
      outputs go first, then convolution outputs, whose inputs are
      recomputed in turn: segments of the forward pass between stored
      values, recomputed in the backward pass.
    - What is recomputed: elementwise ops, views, convolutions and
      `batch_norm_train`'s normalised output. The copy of a batch norm runs
      the same training kernel on the same input, so its output is bitwise
      the stored one; the statistics it computes again go to buffers of its
      own, and the running averages (`update_state`) are updated once, from
      the original's (the inference `batch_norm` folds the statistics into
      one scale and shift and would round differently). Dropout's mask is a
      function of (seed, step, element), so a recomputed `dropout_train`
      drops the same elements. Nothing with a side effect is copied, and no
      copy is placed after a write to a buffer it reads (a parameter's
      update). The step computes bitwise what it computed without a
      budget.
    - If the arena still exceeds the budget when nothing at the peak is
      worth recomputing, the pass fails with one error that gives the
      smallest arena it reached.

    Before (a relu read at the end of the step, across the peak):
    ```mlir
    %r = fastnn.relu %y : tensor<64x64xf32>
    ...peak: %r alive but not read...
    %g = fastnn.relu_backward %r, %dr : tensor<64x64xf32>
    ```
    After (budget below the arena):
    ```mlir
    %r = fastnn.relu %y : tensor<64x64xf32>
    ...peak: %r dead...
    %r2 = fastnn.relu %y : tensor<64x64xf32>
    %g = fastnn.relu_backward %r2, %dr : tensor<64x64xf32>
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::fastnn::FastNNDialect"];
  let options = [
    Option<"budgetBytes", "budget-bytes", "int64_t", "0",
           "Largest arena in bytes (0: no budget)">,
    Option<"maxLoopReduction", "max-loop-reduction", "int64_t", "4096",
           "The target's fastnn-plan-fusion setting, to plan the arena as "
           "the lowering will">,
    Option<"entryName", "entry", "std::string", "\"train_step\"",
           "Name of the training-step function">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed", "Values recomputed after the peak">
  ];
}

#endif // FASTNN_TRANSFORMS_PASSES_TD
