// RUN: fastnnc-opt %s -fastnn-layout=target=cuda -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-layout="target=cpu layout=nchw" -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-layout="target=cuda precision=fp16" -split-input-file | FileCheck %s --check-prefix=TC
// RUN: fastnnc-opt %s -fastnn-layout=target=cpu -split-input-file | FileCheck %s --check-prefix=TC
// RUN: fastnnc-opt %s -fastnn-layout="layout=nchw input-layout=model" -split-input-file | FileCheck %s --check-prefix=FIXED
// RUN: fastnnc-opt %s -fastnn-layout="target=cpu input-layout=model" -cse -split-input-file | FileCheck %s --check-prefix=CPU
// RUN: fastnnc-opt %s -fastnn-layout="target=cpu input-layout=reads" -cse -split-input-file | FileCheck %s --check-prefix=READS

// An NHWC-style import (tf2onnx wraps every NCHW op in transposes): for
// NCHW kernels (cuDNN's fp32 ones) every op keeps NCHW, the transposes
// cancel, the one after the input becomes the input (the loader writes
// NCHW) and the one before the global pooling folds into its axes.

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

// The CPU's kernels, and CUDA's with fp16, take NHWC: the convolution's
// OIHW filter is transposed to OHWI, the input stays NHWC and no
// activation is transposed.

// TC-LABEL: func.func @nhwc_style(
// TC-SAME: %[[X:.*]]: tensor<2x8x8x3xf32>
// TC: %[[W:.*]] = fastnn.transpose %{{.*}} {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
// TC-NEXT: %[[C:.*]] = fastnn.conv2d %[[X]], %[[W]] {layout = #fastnn.layout<nhwc>} : (tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x6x6x4xf32>
// TC-NEXT: %[[R:.*]] = fastnn.relu %[[C]] : tensor<2x6x6x4xf32>
// TC-NEXT: fastnn.reduce_mean %[[R]] {axes = array<i64: 1, 2>} : tensor<2x6x6x4xf32> -> tensor<2x4xf32>
// A loader that writes what the model's own ops read (train.bin's, NCHW):
// the input takes the model's transpose first, then one transpose into the
// kernels' NHWC stays.

// READS-LABEL: func.func @nhwc_style(
// READS-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>
// READS: %[[T:.*]] = fastnn.transpose %[[X]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
// READS: %[[C:.*]] = fastnn.conv2d %[[T]], %{{.*}} {layout = #fastnn.layout<nhwc>}
// READS-NEXT: %[[R:.*]] = fastnn.relu %[[C]] : tensor<2x6x6x4xf32>
// READS-NEXT: fastnn.reduce_mean %[[R]] {axes = array<i64: 1, 2>} : tensor<2x6x6x4xf32> -> tensor<2x4xf32>
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
// for NCHW kernels: a residual block's add of two equally transposed values
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

// -----

// An NCHW import for the CPU's NHWC kernels, its input fixed (train.bin's
// loader and infer.bin's .npy files write NCHW): one transpose of the
// input; inception-style branches concatenate over NHWC's channel axis and
// the padding before a pool pads NHWC's spatial dimensions, so no other
// activation is transposed.

// CPU-LABEL: func.func @branches(
// CPU-SAME: %[[X:.*]]: tensor<1x3x6x6xf32>
// CPU: %[[T:.*]] = fastnn.transpose %[[X]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x6x6xf32> -> tensor<1x6x6x3xf32>
// CPU: %[[A:.*]] = fastnn.conv2d %[[T]], %{{.*}} {layout = #fastnn.layout<nhwc>} : (tensor<1x6x6x3xf32>, tensor<2x1x1x3xf32>) -> tensor<1x6x6x2xf32>
// CPU: %[[B:.*]] = fastnn.conv2d %[[T]], %{{.*}} {layout = #fastnn.layout<nhwc>} : (tensor<1x6x6x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x6x6x4xf32>
// CPU-NEXT: %[[C:.*]] = fastnn.concat %[[A]], %[[B]] {axis = 3 : i64} : (tensor<1x6x6x2xf32>, tensor<1x6x6x4xf32>) -> tensor<1x6x6x6xf32>
// CPU-NEXT: %[[P:.*]] = fastnn.pad %[[C]] {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>} : tensor<1x6x6x6xf32> -> tensor<1x8x8x6xf32>
// CPU-NEXT: %[[Q:.*]] = fastnn.avg_pool2d %[[P]] {kernel_shape = array<i64: 3, 3>, layout = #fastnn.layout<nhwc>} : tensor<1x8x8x6xf32> -> tensor<1x6x6x6xf32>
// CPU-NEXT: %[[M:.*]] = fastnn.reduce_mean %[[Q]] {axes = array<i64: 1, 2>} : tensor<1x6x6x6xf32> -> tensor<1x6xf32>
// CPU-NEXT: return %[[M]]
fastnn.parameter @a trainable = dense<0.1> : tensor<2x3x1x1xf32>
fastnn.parameter @b trainable = dense<0.2> : tensor<4x3x1x1xf32>
func.func @branches(%x: tensor<1x3x6x6xf32>) -> tensor<1x6xf32> {
  %wa = fastnn.param @a : tensor<2x3x1x1xf32>
  %wb = fastnn.param @b : tensor<4x3x1x1xf32>
  %a = fastnn.conv2d %x, %wa : (tensor<1x3x6x6xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x6x6xf32>
  %b = fastnn.conv2d %x, %wb : (tensor<1x3x6x6xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x6x6xf32>
  %c = fastnn.concat %a, %b {axis = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x6x6x6xf32>
  %p = fastnn.pad %c {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<1x6x6x6xf32> -> tensor<1x6x8x8xf32>
  %q = fastnn.avg_pool2d %p {kernel_shape = array<i64: 3, 3>} : tensor<1x6x8x8xf32> -> tensor<1x6x6x6xf32>
  %m = fastnn.reduce_mean %q {axes = array<i64: 2, 3>} : tensor<1x6x6x6xf32> -> tensor<1x6xf32>
  return %m : tensor<1x6xf32>
}

// -----

// Transposes move through erf like through the other elementwise ops: the
// pair around a channels-last GELU (ConvNeXt's) cancels.

// CHECK-LABEL: func.func @erf_between_transposes(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x3x3xf32>
// CHECK-NEXT: %[[E:.*]] = fastnn.erf %[[X]] : tensor<2x4x3x3xf32>
// CHECK-NEXT: return %[[E]]
func.func @erf_between_transposes(%x: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %t = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x4x3x3xf32> -> tensor<2x3x3x4xf32>
  %e = fastnn.erf %t : tensor<2x3x3x4xf32>
  %u = fastnn.transpose %e {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x3x3x4xf32> -> tensor<2x4x3x3xf32>
  return %u : tensor<2x4x3x3xf32>
}

// -----

// Every reduction (the Reduction trait) reduces the untransposed value.

// CHECK-LABEL: func.func @every_reduction(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x3x3xf32>
// CHECK-NEXT: %[[A:.*]] = fastnn.reduce_max %[[X]] {axes = array<i64: 2, 3>} : tensor<1x4x3x3xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[B:.*]] = fastnn.reduce_min %[[X]] {axes = array<i64: 2, 3>} : tensor<1x4x3x3xf32> -> tensor<1x4xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @every_reduction(%x: tensor<1x4x3x3xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %t = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x4x3x3xf32> -> tensor<1x3x3x4xf32>
  %a = fastnn.reduce_max %t {axes = array<i64: 1, 2>} : tensor<1x3x3x4xf32> -> tensor<1x4xf32>
  %b = fastnn.reduce_min %t {axes = array<i64: 1, 2>} : tensor<1x3x3x4xf32> -> tensor<1x4xf32>
  return %a, %b : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// An NHWC image input rescaled before tf2onnx's first transpose (a Keras
// model's Rescaling layer): the loader writes NCHW, so the input becomes
// NCHW and is read through a transpose back to NHWC, which moves past the
// scaling and cancels with the model's; the kernels read NHWC again. An
// input that cannot hold NCHW images (4 channels) stays as declared.

// READS-LABEL: func.func @rescaled_nhwc_input(
// READS-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>, %[[Y:.*]]: tensor<2x8x8x4xf32>
// READS: %[[S:.*]] = fastnn.mul %[[X]], %{{.*}} : (tensor<2x3x8x8xf32>, tensor<f32>) -> tensor<2x3x8x8xf32>
// READS: fastnn.transpose %[[S]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x8x8xf32> -> tensor<2x8x8x3xf32>
// READS: fastnn.mul %[[Y]], %{{.*}} : (tensor<2x8x8x4xf32>, tensor<f32>) -> tensor<2x8x8x4xf32>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
func.func @rescaled_nhwc_input(%x: tensor<2x8x8x3xf32>, %y: tensor<2x8x8x4xf32>) -> (tensor<2x4xf32>, tensor<2x8x8x4xf32>) {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %k = fastnn.constant dense<2.0> : tensor<f32>
  %s = fastnn.mul %x, %k : (tensor<2x8x8x3xf32>, tensor<f32>) -> tensor<2x8x8x3xf32>
  %t = fastnn.transpose %s {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x3xf32> -> tensor<2x3x8x8xf32>
  %c = fastnn.conv2d %t, %w : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %m = fastnn.reduce_mean %c {axes = array<i64: 2, 3>} : tensor<2x4x6x6xf32> -> tensor<2x4xf32>
  %z = fastnn.mul %y, %k : (tensor<2x8x8x4xf32>, tensor<f32>) -> tensor<2x8x8x4xf32>
  return %m, %z : tensor<2x4xf32>, tensor<2x8x8x4xf32>
}
