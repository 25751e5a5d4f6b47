// RUN: fastnnc-opt %s -fastnn-build-train-step="optimizer=momentum weight-decay=0.01" -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-build-train-step="optimizer=adam" -fastnn-clip-gradients="max-norm=5.0" -split-input-file | FileCheck %s --check-prefix=ADAM

// A conv + batch norm + relu + dense classifier: the step's signature, the
// training forms, the loss, the backward ops and the updates at the end.

// CHECK-DAG: fastnn.parameter @w.slot0 slot = dense<0.000000e+00> : tensor<4x1x3x3xf32>
// CHECK-DAG: fastnn.parameter @fc.slot0 slot = dense<0.000000e+00> : tensor<10x64xf32>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.*]]: tensor<2x1x4x4xf32> {fastnn.name = "images"}
// CHECK-SAME: %[[LABELS:.*]]: tensor<2xi64> {fastnn.name = "labels"}
// CHECK-SAME: %[[LR:.*]]: tensor<f32> {fastnn.name = "learning_rate"}
// CHECK-SAME: %[[STEP:.*]]: tensor<i64> {fastnn.name = "step"}
// CHECK-SAME: -> (tensor<f32> {fastnn.name = "loss"}, tensor<f32> {fastnn.name = "top1"}, tensor<f32> {fastnn.name = "top5"})
// CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[VAR:.*]] = fastnn.batch_norm_train
// CHECK-NOT: fastnn.batch_norm %
// CHECK: fastnn.dropout_train %{{.*}}, %[[STEP]] {ratio = 5.000000e-01 : f64
// CHECK: fastnn.log_softmax
// CHECK: fastnn.one_hot %[[LABELS]]
// CHECK: fastnn.in_top_k %{{.*}}, %[[LABELS]] {k = 1 : i64}
// CHECK: fastnn.in_top_k %{{.*}}, %[[LABELS]] {k = 5 : i64}
// CHECK: fastnn.dropout_train
// CHECK: fastnn.relu_backward
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fastnn.batch_norm_backward
// CHECK: %{{.*}}, %[[DW:.*]], %{{.*}} = fastnn.conv2d_backward %[[X]]
// Weight decay reaches the filter and the dense weight, not biases or the
// batch-norm parameters; it joins the gradient where the backward pass
// completes it.
// CHECK-NEXT: %[[WD:.*]] = fastnn.constant dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[DECAY:.*]] = fastnn.mul %{{.*}}, %[[WD]]
// CHECK-NEXT: fastnn.add %[[DW]], %[[DECAY]]
// CHECK: fastnn.update_state
// CHECK: fastnn.update_state
// CHECK-COUNT-4: fastnn.apply_optimizer momentum
// CHECK-NOT: fastnn.apply_optimizer
// CHECK: return

// ADAM-LABEL: func.func @train_step(
// Global-norm clipping: sqrt of the summed squares, then clip / max(norm, clip).
// ADAM: fastnn.sqrt
// ADAM: fastnn.max
// ADAM: fastnn.div
// ADAM: fastnn.apply_optimizer adam
fastnn.parameter @w trainable = dense<0.1> : tensor<4x1x3x3xf32>
fastnn.parameter @s trainable = dense<1.0> : tensor<4xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4xf32>
fastnn.parameter @v statistic = dense<1.0> : tensor<4xf32>
fastnn.parameter @fc trainable = dense<0.01> : tensor<10x64xf32>
func.func @forward(%x: tensor<2x1x4x4xf32> {fastnn.name = "images"}) -> (tensor<2x10xf32> {fastnn.name = "logits"}) {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %v = fastnn.param @v : tensor<4xf32>
  %fc = fastnn.param @fc : tensor<10x64xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  %n = fastnn.batch_norm %c, %s, %b, %m, %v {epsilon = 1.0e-3 : f64, momentum = 0.99 : f64} : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %r = fastnn.relu %n : tensor<2x4x4x4xf32>
  %f = fastnn.reshape %r : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  %d = fastnn.dropout %f : tensor<2x64xf32>
  %l = fastnn.matmul %d, %fc {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  return %l : tensor<2x10xf32>
}

// -----

// A filter that reaches its convolution through fastnn-layout's OIHW -> OHWI
// transpose is still a weight that decays.

// CHECK-LABEL: func.func @train_step(
// CHECK: %{{.*}}, %[[NHWC_DW:.*]] = fastnn.conv2d_backward
// CHECK: %[[NHWC_WD:.*]] = fastnn.constant dense<0.00999999977> : tensor<f32>
// CHECK: %[[NHWC_DECAY:.*]] = fastnn.mul %{{.*}}, %[[NHWC_WD]]
// CHECK: fastnn.add %{{.*}}, %[[NHWC_DECAY]]
// CHECK: fastnn.apply_optimizer momentum
fastnn.parameter @w trainable = dense<0.1> : tensor<4x1x3x3xf32>
func.func @forward(%x: tensor<2x4x4x1xf32> {fastnn.name = "images"}) -> (tensor<2x64xf32> {fastnn.name = "logits"}) {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %t = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x1x3x3xf32> -> tensor<4x3x3x1xf32>
  %c = fastnn.conv2d %x, %t {pads = array<i64: 1, 1, 1, 1>, layout = #fastnn.layout<nhwc>} : (tensor<2x4x4x1xf32>, tensor<4x3x3x1xf32>) -> tensor<2x4x4x4xf32>
  %f = fastnn.reshape %c : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  return %f : tensor<2x64xf32>
}

// -----

// A clip's gradient reads the clip's output (inside (min, max) exactly where
// its input is), so the clip is its input's only reader.

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[CLIPPED:.*]] = fastnn.clip %[[CLIP_IN:[^ ]*]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: fastnn.clip_backward %[[CLIPPED]], %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: fastnn.apply_optimizer momentum
fastnn.parameter @fc trainable = dense<0.1> : tensor<10x64xf32>
func.func @forward(%x: tensor<2x64xf32> {fastnn.name = "images"}) -> (tensor<2x10xf32> {fastnn.name = "logits"}) {
  %fc = fastnn.param @fc : tensor<10x64xf32>
  %l = fastnn.matmul %x, %fc {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  %c = fastnn.clip %l {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x10xf32>
  return %c : tensor<2x10xf32>
}

// -----

// Random draws take the step, and the trainer's seed (0 here) mixed into
// theirs, so that each step draws afresh; the mask has no gradient.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[RSTEP:[^:]*]]: tensor<i64> {fastnn.name = "step"}
// CHECK: fastnn.random_mask %[[RSTEP]] : tensor<i64> {probability = 8.000000e-01 : f64, seed = -7046029254386353136 : i64} : tensor<2x64xf32>
// CHECK-NOT: fastnn.random_mask
// CHECK: fastnn.apply_optimizer momentum
fastnn.parameter @fc trainable = dense<0.1> : tensor<10x64xf32>
func.func @forward(%x: tensor<2x64xf32> {fastnn.name = "images"}) -> (tensor<2x10xf32> {fastnn.name = "logits"}) {
  %fc = fastnn.param @fc : tensor<10x64xf32>
  %mask = fastnn.random_mask {probability = 0.8 : f64, seed = 5 : i64} : tensor<2x64xf32>
  %d = fastnn.mul %x, %mask : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %l = fastnn.matmul %d, %fc {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  return %l : tensor<2x10xf32>
}
