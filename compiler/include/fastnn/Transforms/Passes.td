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
      GradientOpInterface; with `max-gradient-norm` > 0 they are clipped by
      their global norm as tf.clip_by_global_norm does;
    - each trainable parameter is updated by `apply_optimizer` with new
      optimizer slot parameters (role `slot`) initialised as tf.train does;
    - top-1 and top-5 accuracy of the batch are returned beside the loss.

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
    Option<"optimizer", "optimizer", "std::string", "\"rmsprop\"",
           "adadelta, adagrad, adam, ftrl, momentum, sgd, rmsprop or adamweightdecay">,
    Option<"weightDecay", "weight-decay", "double", "0.00004",
           "L2 coefficient on convolution and matrix-product weights">,
    Option<"maxGradientNorm", "max-gradient-norm", "double", "0.0",
           "Clip gradients by this global norm (0: no clipping)">,
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
    Option<"ftrlL2", "ftrl-l2", "double", "0.0", "FTRL L2">
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

#endif // FASTNN_TRANSFORMS_PASSES_TD
