// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime="initialize-state=false" -split-input-file | FileCheck %s --check-prefix=EVAL

// An inference step: what it computes from parameters alone (a folded
// filter and its layout transpose) runs on the first run only, behind a
// flag fnn_model_init clears, and the convolution reading the result keeps
// its own copy of the filter (constant_filter, the descriptor's last word).
// The mul's result only the transpose reads: a temporary of the first run.

// CHECK: llvm.mlir.global internal constant @fnn_desc_0(dense<[{{([0-9]+, )+}}1]> : tensor<35xi64>)
// CHECK: llvm.mlir.global internal @fnn_first_run_done(0 : i8)
// CHECK-LABEL: func.func @fnn_model_init(
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK-NEXT: %[[FLAG:.*]] = llvm.mlir.addressof @fnn_first_run_done
// CHECK-NEXT: llvm.store %[[ZERO]], %[[FLAG]]
// CHECK: llvm.call @fnn_conv2d_create
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: %[[DONE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK: %[[FIRST:.*]] = llvm.icmp "eq" %[[DONE]]
// CHECK: scf.if %[[FIRST]] {
// CHECK: llvm.store
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.transpose
// CHECK: }
// CHECK-NOT: linalg
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK-NOT: linalg
// CHECK: return

// The evaluation step's parameters are copied in before each evaluation:
// computed on every run, read by the kernel on every call.

// EVAL: llvm.mlir.global internal constant @fnn_desc_0(dense<[{{([0-9]+, )+}}0]> : tensor<35xi64>)
// EVAL-NOT: fnn_first_run_done
// EVAL-NOT: scf.if
fastnn.parameter @w trainable = dense<0.5> : tensor<4x3x3x3xf32>
fastnn.parameter @s trainable = dense<2.0> : tensor<4xf32>
func.func @forward(%x: tensor<1x8x8x3xf32> {fastnn.name = "images"}) -> (tensor<1x6x6x4xf32> {fastnn.name = "y"}) {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %r = fastnn.reshape %s : tensor<4xf32> -> tensor<4x1x1x1xf32>
  %ws = fastnn.mul %w, %r : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
  %t = fastnn.transpose %ws {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %c = fastnn.conv2d %x, %t {layout = #fastnn.layout<nhwc>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32>
  return %c : tensor<1x6x6x4xf32>
}

// -----

// A folded 1x1 filter reaches its convolution through a view (OIHW and OHWI
// are the same bytes when the window is 1x1): the view is what init, not
// each run, writes, so the convolution keeps its own copy of it too.

// CHECK: llvm.mlir.global internal constant @fnn_desc_0(dense<[{{([0-9]+, )+}}1]> : tensor<35xi64>)
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: scf.if
// CHECK: arith.mulf
// CHECK: }
// CHECK: llvm.call @fnn_conv2d_forward
fastnn.parameter @w trainable = dense<0.5> : tensor<4x3x1x1xf32>
fastnn.parameter @s trainable = dense<2.0> : tensor<4xf32>
func.func @forward(%x: tensor<1x8x8x3xf32> {fastnn.name = "images"}) -> (tensor<1x8x8x4xf32> {fastnn.name = "y"}) {
  %w = fastnn.param @w : tensor<4x3x1x1xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %r = fastnn.reshape %s : tensor<4xf32> -> tensor<4x1x1x1xf32>
  %ws = fastnn.mul %w, %r : (tensor<4x3x1x1xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x1x1xf32>
  %v = fastnn.reshape %ws : tensor<4x3x1x1xf32> -> tensor<4x1x1x3xf32>
  %c = fastnn.conv2d %x, %v {layout = #fastnn.layout<nhwc>} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x8x8x4xf32>
  return %c : tensor<1x8x8x4xf32>
}

// -----

// A step that writes state (a running statistic here) is no inference step:
// nothing is computed once.

// CHECK-LABEL: module
// CHECK: @fnn_desc_0(dense<[{{([0-9]+, )+}}0]> : tensor<35xi64>)
// CHECK-NOT: fnn_first_run_done
// CHECK-NOT: scf.if
fastnn.parameter @w trainable = dense<0.5> : tensor<4x3x3x3xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4x3x3x3xf32>
func.func @forward(%x: tensor<1x8x8x3xf32> {fastnn.name = "images"}) -> (tensor<1x6x6x4xf32> {fastnn.name = "y"}) {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %m = fastnn.param @m : tensor<4x3x3x3xf32>
  %t = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
  %c = fastnn.conv2d %x, %t {layout = #fastnn.layout<nhwc>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32>
  fastnn.update_state %t into %m : tensor<4x3x3x3xf32>
  return %c : tensor<1x6x6x4xf32>
}

// -----

// A first-run value that later runs read through a view (the transposed
// bias, reshaped) keeps its buffer for the whole run: nothing else, here
// the softmax's output, is placed over it.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: scf.if
// CHECK: memref.view {{.*}} to memref<16x16x3xf32>
// CHECK-NEXT: arith.constant [[BIAS:[0-9]+]] : index
// CHECK-NEXT: memref.view
// CHECK-NEXT: linalg.transpose
// CHECK: }
// CHECK-NOT: llvm.mlir.constant([[BIAS]] : i64)
// CHECK: llvm.call @fnn_softmax_forward
fastnn.parameter @bias trainable = dense<0.5> : tensor<16x16x3xf32>
func.func @forward(%x: tensor<8x3x16x16xf32> {fastnn.name = "x"}) -> (tensor<8x3x16x16xf32> {fastnn.name = "y"}) {
  %b = fastnn.param @bias : tensor<16x16x3xf32>
  %t = fastnn.transpose %b {permutation = array<i64: 2, 0, 1>} : tensor<16x16x3xf32> -> tensor<3x16x16xf32>
  %r = fastnn.reshape %t : tensor<3x16x16xf32> -> tensor<1x3x16x16xf32>
  %a = fastnn.add %x, %r : (tensor<8x3x16x16xf32>, tensor<1x3x16x16xf32>) -> tensor<8x3x16x16xf32>
  %y = fastnn.softmax %a {axis = 3 : i64} : tensor<8x3x16x16xf32>
  return %y : tensor<8x3x16x16xf32>
}
