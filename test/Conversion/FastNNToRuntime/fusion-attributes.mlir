// RUN: fastnnc-opt %s -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// The lowering applies the recorded decisions and makes none itself.
// Without fastnn-plan-fusion a relu after a convolution is a loop nest of
// its own.

// CHECK: @fnn_desc_0(dense<[4, 1, 1, 2, 2, 0, 0, 4, 2, 1, 1, 1, 0, 0, 4, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK: linalg.generic
// CHECK: arith.maximumf
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %c : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// With the attributes, the relu is the kernel's post-op (FNN_POST_RELU in
// the descriptor after dtype and layout) and no loop remains.

// CHECK: @fnn_desc_0(dense<[4, 1, 1, 2, 2, 0, 0, 4, 2, 1, 1, 1, 0, 0, 4, 1, 2, 2, 2, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK-NOT: linalg.generic
// CHECK: return
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w {fastnn.post_op = "relu"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %c {fastnn.fused_into_producer} : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}
