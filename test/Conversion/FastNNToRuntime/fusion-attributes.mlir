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

// -----

// An accumulating convolution writes into its addend's buffer: both
// convolutions' outputs are the same arena bytes, and the second's
// descriptor says FNN_POST_ACCUMULATE | FNN_POST_RELU (9). No loop is left
// for the add or the relu.

// CHECK-DAG: @fnn_desc_0(dense<[4, 1, 1, 2, 2, 0, 0, 4, 2, 1, 1, 1, 0, 0, 4, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]>
// CHECK-DAG: @fnn_desc_1(dense<[4, 1, 1, 2, 2, 0, 0, 4, 2, 1, 1, 1, 0, 0, 4, 1, 2, 2, 2, 0, 0, 0, 0, 0, 9, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: llvm.call @fnn_trace_begin
// CHECK: %[[FIRST_AT:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[FIRST:.*]] = llvm.getelementptr %arg0[%[[FIRST_AT]]]
// CHECK: llvm.call @fnn_conv2d_forward({{.*}}, %[[FIRST]])
// CHECK: llvm.call @fnn_trace_begin
// CHECK: %[[SECOND_AT:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[SECOND:.*]] = llvm.getelementptr %arg0[%[[SECOND_AT]]]
// CHECK: llvm.call @fnn_conv2d_forward({{.*}}, %[[SECOND]])
// CHECK-NOT: linalg.generic
// CHECK: return
fastnn.parameter @w1 trainable = dense<1.0> : tensor<2x1x1x1xf32>
fastnn.parameter @w2 trainable = dense<2.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w1 = fastnn.param @w1 : tensor<2x1x1x1xf32>
  %w2 = fastnn.param @w2 : tensor<2x1x1x1xf32>
  %a = fastnn.conv2d %x, %w1 : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %b = fastnn.conv2d %x, %w2 {fastnn.accumulate, fastnn.post_op = "relu"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = fastnn.add %b, %a {fastnn.fused_into_producer} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %s {fastnn.fused_into_producer} : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// relu6 (clip 0..6) is a convolution's post-op FNN_POST_RELU6 (2).

// CHECK: @fnn_desc_0(dense<[4, 1, 1, 2, 2, 0, 0, 4, 2, 1, 1, 1, 0, 0, 4, 1, 2, 2, 2, 0, 0, 0, 0, 0, 2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK-NOT: linalg.generic
// CHECK: return
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w {fastnn.post_op = "relu6"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.clip %c {fastnn.fused_into_producer, min = 0.0 : f64, max = 6.0 : f64} : tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}
