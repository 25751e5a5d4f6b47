// RUN: fastnnc-opt %s -fastnn-layout=target=cpu -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-layout="target=cuda precision=fp16" -split-input-file | FileCheck %s --check-prefix=TC
// RUN: fastnnc-opt %s -fastnn-layout="move-input-transposes=false" -split-input-file | FileCheck %s --check-prefix=FIXED

// An NHWC-style import (tf2onnx wraps every NCHW op in transposes): for the
// CPU every op keeps NCHW, the transposes cancel, the one after the input
// becomes the input (the loader writes NCHW) and the one before the global
// pooling folds into its axes.

// CHECK-LABEL: func.func @nhwc_style(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>
// CHECK-NOT: fastnn.transpose
// CHECK: %[[C:.*]] = fastnn.conv2d %[[X]], %{{.*}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
// CHECK-NEXT: %[[R:.*]] = fastnn.relu %[[C]] : tensor<2x4x6x6xf32>
// CHECK-NEXT: %[[M:.*]] = fastnn.reduce_mean %[[R]] {axes = array<i64: 2, 3>} : tensor<2x4x6x6xf32> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[M]]

// An input whose layout the caller fixes (infer.bin's .npy files) keeps it:
// its transpose stays, the others still go.

// FIXED-LABEL: func.func @nhwc_style(
// FIXED-SAME: %[[X:.*]]: tensor<2x8x8x3xf32>
// FIXED: %[[T:.*]] = fastnn.transpose %[[X]] {permutation = array<i64: 0, 3, 1, 2>}
// FIXED-NEXT: fastnn.conv2d %[[T]]
// FIXED-NOT: fastnn.transpose
// FIXED: return

// With fp16 on CUDA the convolution takes NHWC (its OIHW filter is
// transposed to OHWI): the input stays NHWC and no activation is
// transposed.

// TC-LABEL: func.func @nhwc_style(
// TC-SAME: %[[X:.*]]: tensor<2x8x8x3xf32>
// TC: %[[W:.*]] = fastnn.transpose %{{.*}} {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
// TC-NEXT: %[[C:.*]] = fastnn.conv2d %[[X]], %[[W]] {layout = #fastnn.layout<nhwc>} : (tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x6x6x4xf32>
// TC-NEXT: %[[R:.*]] = fastnn.relu %[[C]] : tensor<2x6x6x4xf32>
// TC-NEXT: fastnn.reduce_mean %[[R]] {axes = array<i64: 1, 2>} : tensor<2x6x6x4xf32> -> tensor<2x4xf32>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
func.func @nhwc_style(%x: tensor<2x8x8x3xf32>) -> tensor<2x4xf32> {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %t = fastnn.transpose %x {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x3xf32> -> tensor<2x3x8x8xf32>
  %c = fastnn.conv2d %t, %w : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %u = fastnn.transpose %c {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x4x6x6xf32> -> tensor<2x6x6x4xf32>
  %r = fastnn.relu %u : tensor<2x6x6x4xf32>
  %m = fastnn.reduce_mean %r {axes = array<i64: 1, 2>} : tensor<2x6x6x4xf32> -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}

// -----

// NHWC ops (as an NHWC import of another frontend would give) become NCHW
// for the CPU: a residual block's add of two equally transposed values
// moves past the transposes, which then cancel; pooling keeps its
// attributes, batch norm its per-channel operands. A reduction that keeps
// its dimensions ends in a reshape (the same elements).

// CHECK-LABEL: func.func @residual(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x5x5xf32>
// CHECK: %[[A:.*]] = fastnn.conv2d %[[X]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: %[[B:.*]] = fastnn.batch_norm %[[A]], {{.*}} -> tensor<1x4x5x5xf32>
// CHECK-NEXT: %[[S:.*]] = fastnn.add %[[B]], %[[X]] : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: %[[P:.*]] = fastnn.max_pool2d %[[S]] {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x5x5xf32> -> tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[M:.*]] = fastnn.reduce_sum %[[P]] {axes = array<i64: 2, 3>, keepdims} : tensor<1x4x2x2xf32> -> tensor<1x4x1x1xf32>
// CHECK-NEXT: %[[O:.*]] = fastnn.reshape %[[M]] : tensor<1x4x1x1xf32> -> tensor<1x1x1x4xf32>
// CHECK-NEXT: return %[[O]]
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x4xf32>
fastnn.parameter @p trainable = dense<1.0> : tensor<4xf32>
func.func @residual(%x: tensor<1x5x5x4xf32>) -> tensor<1x1x1x4xf32> {
  %w = fastnn.param @w : tensor<4x3x3x4xf32>
  %p = fastnn.param @p : tensor<4xf32>
  %a = fastnn.conv2d %x, %w {layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x5x5x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x5x5x4xf32>
  %b = fastnn.batch_norm %a, %p, %p, %p, %p {layout = #fastnn.layout<nhwc>} : (tensor<1x5x5x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x5x5x4xf32>
  %s = fastnn.add %b, %x : (tensor<1x5x5x4xf32>, tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32>
  %q = fastnn.max_pool2d %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = #fastnn.layout<nhwc>} : tensor<1x5x5x4xf32> -> tensor<1x2x2x4xf32>
  %m = fastnn.reduce_sum %q {axes = array<i64: 1, 2>, keepdims} : tensor<1x2x2x4xf32> -> tensor<1x1x1x4xf32>
  return %m : tensor<1x1x1x4xf32>
}
