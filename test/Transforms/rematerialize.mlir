// RUN: fastnnc-opt %s -fastnn-build-train-step=optimizer=sgd -canonicalize -cse -fastnn-rematerialize=budget-bytes=360000 | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-build-train-step=optimizer=sgd -canonicalize -cse -fastnn-rematerialize=budget-bytes=240000 | FileCheck %s --check-prefix=CONV
// RUN: fastnnc-opt %s -fastnn-build-train-step=optimizer=sgd -canonicalize -cse -fastnn-rematerialize=budget-bytes=400000 | FileCheck %s --check-prefix=FITS
// RUN: fastnnc-opt %s -fastnn-build-train-step=optimizer=sgd -canonicalize -cse -fastnn-rematerialize | FileCheck %s --check-prefix=FITS
// RUN: not fastnnc-opt %s -fastnn-build-train-step=optimizer=sgd -canonicalize -cse -fastnn-rematerialize=budget-bytes=100000 2>&1 | FileCheck %s --check-prefix=SMALL

// Two convolution, batch norm and relu blocks: without a budget the step's
// arena is 366720 bytes, its peak where the backward pass starts, with
// every block's convolution output (read by the batch norm's backward) and
// relu output (read by the relu's and the next convolution's backward)
// stored.

// Under 360000 bytes the first block's relu is recomputed where its
// backward readers start, from a copy of its batch norm (the training
// kernel again, for bitwise equal results) of the stored convolution
// output; the running statistics are still updated from the original's.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[C1:.*]] = fastnn.conv2d %arg0
// CHECK: %[[N1:.*]], %[[MEAN1:.*]], %[[VAR1:.*]] = fastnn.batch_norm_train %[[C1]]
// CHECK: %[[R1:.*]] = fastnn.relu %[[N1]]
// CHECK: fastnn.conv2d %[[R1]]
// CHECK: fastnn.relu_backward
// CHECK: fastnn.batch_norm_backward
// CHECK: %[[N1B:.*]], %{{.*}}, %{{.*}} = fastnn.batch_norm_train %[[C1]]
// CHECK-NEXT: %[[R1B:.*]] = fastnn.relu %[[N1B]]
// CHECK-NEXT: fastnn.conv2d_backward %[[R1B]]
// CHECK-NOT: %[[R1]]
// CHECK: fastnn.relu_backward %[[R1B]]
// CHECK: fastnn.batch_norm_backward %[[C1]], %{{.*}}, %[[MEAN1]], %[[VAR1]]
// CHECK: fastnn.mul %[[MEAN1]]
// CHECK: fastnn.update_state

// Under 240000 bytes the first convolution is recomputed too, from the
// images (an input, alive anyway), before each of its backward readers.
// CONV: %[[C1:.*]] = fastnn.conv2d %arg0
// CONV: fastnn.batch_norm_backward
// CONV: %[[C1B:.*]] = fastnn.conv2d %arg0
// CONV-NEXT: %[[N1B:.*]], %{{.*}}, %{{.*}} = fastnn.batch_norm_train %[[C1B]]
// CONV-NEXT: fastnn.relu %[[N1B]]
// CONV: %[[C1C:.*]] = fastnn.conv2d %arg0
// CONV-NEXT: fastnn.batch_norm_backward %[[C1C]]

// A step that fits (or no budget) is left alone.
// FITS-COUNT-2: = fastnn.batch_norm_train
// FITS-NOT: = fastnn.batch_norm_train
// FITS-NOT: = fastnn.conv2d %arg0

// SMALL: error: the training step's arena does not fit the memory budget of 0.1 MiB (memory_budget_mb): recomputing activations brings it down to 0.2 MiB (239872 bytes) at the least

fastnn.parameter @w1 trainable = dense<0.1> : tensor<8x4x3x3xf32>
fastnn.parameter @s1 trainable = dense<1.0> : tensor<8xf32>
fastnn.parameter @b1 trainable = dense<0.0> : tensor<8xf32>
fastnn.parameter @m1 statistic = dense<0.0> : tensor<8xf32>
fastnn.parameter @v1 statistic = dense<1.0> : tensor<8xf32>
fastnn.parameter @w2 trainable = dense<0.1> : tensor<8x8x3x3xf32>
fastnn.parameter @s2 trainable = dense<1.0> : tensor<8xf32>
fastnn.parameter @b2 trainable = dense<0.0> : tensor<8xf32>
fastnn.parameter @m2 statistic = dense<0.0> : tensor<8xf32>
fastnn.parameter @v2 statistic = dense<1.0> : tensor<8xf32>
fastnn.parameter @fc trainable = dense<0.01> : tensor<10x8xf32>
func.func @forward(%x: tensor<8x4x16x16xf32> {fastnn.name = "images"}) -> (tensor<8x10xf32> {fastnn.name = "logits"}) {
  %w1 = fastnn.param @w1 : tensor<8x4x3x3xf32>
  %s1 = fastnn.param @s1 : tensor<8xf32>
  %b1 = fastnn.param @b1 : tensor<8xf32>
  %m1 = fastnn.param @m1 : tensor<8xf32>
  %v1 = fastnn.param @v1 : tensor<8xf32>
  %w2 = fastnn.param @w2 : tensor<8x8x3x3xf32>
  %s2 = fastnn.param @s2 : tensor<8xf32>
  %b2 = fastnn.param @b2 : tensor<8xf32>
  %m2 = fastnn.param @m2 : tensor<8xf32>
  %v2 = fastnn.param @v2 : tensor<8xf32>
  %fc = fastnn.param @fc : tensor<10x8xf32>
  %c1 = fastnn.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<8x4x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<8x8x16x16xf32>
  %n1 = fastnn.batch_norm %c1, %s1, %b1, %m1, %v1 : (tensor<8x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8x16x16xf32>
  %r1 = fastnn.relu %n1 : tensor<8x8x16x16xf32>
  %c2 = fastnn.conv2d %r1, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<8x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<8x8x16x16xf32>
  %n2 = fastnn.batch_norm %c2, %s2, %b2, %m2, %v2 : (tensor<8x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8x16x16xf32>
  %r2 = fastnn.relu %n2 : tensor<8x8x16x16xf32>
  %p = fastnn.reduce_mean %r2 {axes = array<i64: 2, 3>} : tensor<8x8x16x16xf32> -> tensor<8x8xf32>
  %l = fastnn.matmul %p, %fc {transpose_b} : (tensor<8x8xf32>, tensor<10x8xf32>) -> tensor<8x10xf32>
  return %l : tensor<8x10xf32>
}
