// RUN: fastnnc-opt %s -fastnn-build-eval-step -split-input-file | FileCheck %s

// A conv + batch norm + relu + dropout + dense classifier with an auxiliary
// head: the step takes images and labels and returns per-sample loss, top-1
// and top-5. Batch norm keeps its running statistics, dropout stays the
// identity, nothing is differentiated or written, and the auxiliary head
// and its parameter are gone.

// CHECK-NOT: fastnn.parameter @aux
// CHECK-NOT: slot
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: %[[X:.*]]: tensor<2x1x4x4xf32> {fastnn.name = "images"}
// CHECK-SAME: %[[LABELS:.*]]: tensor<2xi64> {fastnn.name = "labels"}
// CHECK-SAME: -> (tensor<2xf32> {fastnn.name = "loss"}, tensor<2xf32> {fastnn.name = "top1"}, tensor<2xf32> {fastnn.name = "top5"})
// CHECK-DAG: %[[MEAN:.*]] = fastnn.param @m
// CHECK-DAG: %[[VAR:.*]] = fastnn.param @v
// CHECK-NOT: fastnn.param @aux
// CHECK: fastnn.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[VAR]]
// CHECK: fastnn.dropout %
// CHECK: %[[LOGITS:.*]] = fastnn.matmul
// CHECK-NOT: fastnn.matmul
// CHECK: %[[LOGP:.*]] = fastnn.log_softmax %[[LOGITS]] {axis = 1 : i64}
// CHECK: %[[ONEHOT:.*]] = fastnn.one_hot %[[LABELS]] : tensor<2xi64> -> tensor<2x10xf32>
// CHECK: %[[PICKED:.*]] = fastnn.mul %[[ONEHOT]], %[[LOGP]]
// CHECK: %[[SUM:.*]] = fastnn.reduce_sum %[[PICKED]] {axes = array<i64: 1>} : tensor<2x10xf32> -> tensor<2xf32>
// CHECK: %[[LOSS:.*]] = fastnn.neg %[[SUM]] : tensor<2xf32>
// CHECK: %[[TOP1:.*]] = fastnn.in_top_k %[[LOGITS]], %[[LABELS]] {k = 1 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<2xf32>
// CHECK: %[[TOP5:.*]] = fastnn.in_top_k %[[LOGITS]], %[[LABELS]] {k = 5 : i64}
// CHECK-NEXT: return %[[LOSS]], %[[TOP1]], %[[TOP5]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
// CHECK-NOT: batch_norm_train
// CHECK-NOT: dropout_train
// CHECK-NOT: update_state
// CHECK-NOT: apply_optimizer
// CHECK-NOT: _backward
fastnn.parameter @w trainable = dense<0.1> : tensor<4x1x3x3xf32>
fastnn.parameter @s trainable = dense<1.0> : tensor<4xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4xf32>
fastnn.parameter @v statistic = dense<1.0> : tensor<4xf32>
fastnn.parameter @fc trainable = dense<0.01> : tensor<10x64xf32>
fastnn.parameter @aux trainable = dense<0.02> : tensor<10x64xf32>
func.func @forward(%x: tensor<2x1x4x4xf32> {fastnn.name = "input"}) -> (tensor<2x10xf32> {fastnn.name = "logits"}, tensor<2x10xf32> {fastnn.name = "aux_logits"}) {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %v = fastnn.param @v : tensor<4xf32>
  %fc = fastnn.param @fc : tensor<10x64xf32>
  %aux = fastnn.param @aux : tensor<10x64xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  %n = fastnn.batch_norm %c, %s, %b, %m, %v {epsilon = 1.0e-3 : f64, momentum = 0.99 : f64} : (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %r = fastnn.relu %n : tensor<2x4x4x4xf32>
  %f = fastnn.reshape %r : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  %d = fastnn.dropout %f : tensor<2x64xf32>
  %l = fastnn.matmul %d, %fc {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  %a = fastnn.matmul %f, %aux {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  return %l, %a : tensor<2x10xf32>, tensor<2x10xf32>
}

// -----

// Convolutional heads' [N, C, 1, 1] logits become [N, C]; with 3 classes
// top-5 counts all of them, as the training step does.

// CHECK-LABEL: func.func @eval_step(
// CHECK: %[[LOGITS:.*]] = fastnn.reshape %{{.*}} : tensor<4x3x1x1xf32> -> tensor<4x3xf32>
// CHECK: fastnn.in_top_k %[[LOGITS]], %{{.*}} {k = 1 : i64}
// CHECK: fastnn.in_top_k %[[LOGITS]], %{{.*}} {k = 3 : i64}
func.func @forward(%x: tensor<4x3x1x1xf32>) -> tensor<4x3x1x1xf32> {
  return %x : tensor<4x3x1x1xf32>
}

// -----

// The loss is computed in float32 whatever precision the logits have.

// CHECK-LABEL: func.func @eval_step(
// CHECK: %[[WIDE:.*]] = fastnn.cast %{{.*}} : tensor<2x10xf16> -> tensor<2x10xf32>
// CHECK: fastnn.log_softmax %[[WIDE]]
// CHECK: fastnn.in_top_k %[[WIDE]]
func.func @forward(%x: tensor<2x10xf16>) -> tensor<2x10xf16> {
  return %x : tensor<2x10xf16>
}
