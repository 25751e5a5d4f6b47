// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file --mlir-print-elementsattrs-with-hex-if-larger=1000 | FileCheck %s

// Pools: kind, count_include_pad, kernel, strides, pads, dilations, in the
// order of fnn_pool2d_desc.

// CHECK-DAG: dense<[4, 1, 2, 5, 5, 0, 0, 4, 1, 2, 3, 3, 0, 0, 0, 0, 0, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1]> : tensor<28xi64>
// CHECK-DAG: dense<[4, 1, 2, 5, 5, 0, 0, 4, 1, 2, 3, 3, 0, 0, 0, 0, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1]> : tensor<28xi64>
// CHECK: llvm.call @fnn_pool2d_forward
// CHECK: llvm.call @fnn_pool2d_forward
func.func @forward(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %m = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %a = fastnn.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  return %m, %a : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A training batch norm adds a residual read by the add alone and then
// applies the relu after it: post-op FNN_POST_RESIDUAL | FNN_POST_RELU (17),
// the residual's pointer passed before the output's; no loop nest is left.

// CHECK: dense<[4, 1, 2, 2, 3, 0, 0, 0, 1, 17, {{[0-9]+}}]> : tensor<11xi64>
// CHECK: func.func @fnn_model_run
// CHECK-NOT: linalg.generic
// CHECK: llvm.call @fnn_batch_norm_train_forward(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
// CHECK-NOT: linalg.generic
// CHECK: return
fastnn.parameter @s trainable = dense<1.0> : tensor<3xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<1x2x2x3xf32>, %r: tensor<1x2x2x3xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %s = fastnn.param @s : tensor<3xf32>
  %b = fastnn.param @b : tensor<3xf32>
  %y, %m, %v = fastnn.batch_norm_train %x, %s, %b {layout = #fastnn.layout<nhwc>} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %a = fastnn.add %y, %r : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %o = fastnn.relu %a : tensor<1x2x2x3xf32>
  return %o, %r, %m, %v : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Batch norm absorbs a following relu; epsilon is stored bit for bit
// (1.0e-3 is 0x3F50624DD2F1A9FC = 4562254508917369340).

// CHECK: dense<[4, 1, 3, 2, 2, 0, 0, 0, 0, 1, 4562254508917369340]> : tensor<11xi64>
// CHECK: func.func @fnn_model_run
// CHECK: llvm.call @fnn_batch_norm_forward
// CHECK-NOT: linalg.generic
// CHECK: return
fastnn.parameter @s trainable = dense<1.0> : tensor<3xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<3xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<3xf32>
fastnn.parameter @v statistic = dense<1.0> : tensor<3xf32>
func.func @forward(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %s = fastnn.param @s : tensor<3xf32>
  %b = fastnn.param @b : tensor<3xf32>
  %m = fastnn.param @m : tensor<3xf32>
  %v = fastnn.param @v : tensor<3xf32>
  %y = fastnn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  %r = fastnn.relu %y : tensor<1x3x2x2xf32>
  return %r : tensor<1x3x2x2xf32>
}

// -----

// A relu whose input has another user stays a loop.

// CHECK: llvm.call @fnn_conv2d_forward
// CHECK: linalg.generic
// CHECK: arith.maximumf
fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  %c = fastnn.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = fastnn.relu %c : tensor<1x2x2x2xf32>
  return %c, %r : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// LRN, softmax, log-softmax and reductions of more than 4096 elements per
// output element are kernels; a reduction without keepdims writes the
// keepdims shape into the same bytes.

// CHECK-DAG: llvm.call @fnn_lrn_create
// CHECK-DAG: dense<[2, 2, 5, 0, 0, 0, 0, 0, 1, 0]> : tensor<10xi64>
// CHECK-DAG: dense<[2, 2, 5, 0, 0, 0, 0, 0, 1, 1]> : tensor<10xi64>
// CHECK-DAG: dense<[2, 2, 5000, 0, 0, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0, 1]> : tensor<16xi64>
// CHECK: func.func @fnn_model_run
// CHECK: llvm.call @fnn_lrn_forward
// CHECK: llvm.call @fnn_softmax_forward
// CHECK: llvm.call @fnn_softmax_forward
// CHECK: llvm.call @fnn_reduce_forward
func.func @forward(%x: tensor<1x4x2x2xf32>, %l: tensor<2x5xf32>, %m: tensor<2x5000xf32>) -> (tensor<1x4x2x2xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2xf32>) {
  %n = fastnn.lrn %x {size = 3 : i64} : tensor<1x4x2x2xf32>
  %s = fastnn.softmax %l {axis = 1 : i64} : tensor<2x5xf32>
  %ls = fastnn.log_softmax %l {axis = 1 : i64} : tensor<2x5xf32>
  %r = fastnn.reduce_mean %m {axes = array<i64: 1>} : tensor<2x5000xf32> -> tensor<2xf32>
  return %n, %s, %ls, %r : tensor<1x4x2x2xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2xf32>
}

// -----

// Casts pick the arith conversion for the pair of types; bf16 is rounded
// to nearest even on the bits (an i16 view), NaN kept.

// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf une
func.func @forward(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>) {
  %a = fastnn.cast %x {to = i64} : tensor<4xf32> -> tensor<4xi64>
  %b = fastnn.cast %i {to = f32} : tensor<4xi64> -> tensor<4xf32>
  %c = fastnn.cast %x {to = bf16} : tensor<4xf32> -> tensor<4xbf16>
  %d = fastnn.cast %x {to = i1} : tensor<4xf32> -> tensor<4xi1>
  return %a, %b, %c, %d : tensor<4xi64>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>
}

// -----

// Transpose is linalg.transpose; reflect and edge padding compute source
// indices.

// CHECK: linalg.transpose
// CHECK-SAME: permutation = [1, 0]
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK: arith.select
// CHECK: memref.load
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: memref.load
func.func @forward(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x7xf32>, tensor<2x7xf32>) {
  %t = fastnn.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %r = fastnn.pad %x {pads = array<i64: 0, 2, 0, 2>, mode = #fastnn.pad_mode<reflect>} : tensor<2x3xf32> -> tensor<2x7xf32>
  %e = fastnn.pad %x {pads = array<i64: 0, 2, 0, 2>, mode = #fastnn.pad_mode<edge>} : tensor<2x3xf32> -> tensor<2x7xf32>
  return %t, %r, %e : tensor<3x2xf32>, tensor<2x7xf32>, tensor<2x7xf32>
}

// -----

// An inverted residual block is one kernel: the count (3), the three
// descriptors (NHWC; the expansion's and the depthwise convolution's relu6
// are post-op 2, the projection accumulates into the block's input, post-op
// 8; the filters constant in an inference model), then the call with each
// convolution's filter, bias and output, in a trace span of its own name.
// (The RUN line prints attributes of up to 1000 elements in decimal; MLIR's
// default switches to hex at 100.)

// CHECK: dense<[3, 4, 1, 4, 4, 2, 0, 0, 4, 6, 1, 1, 2, 0, 0, 4, 1, 4, 4, 6, 0, 0, 0, 1, 0, 2, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 4, 1, 4, 4, 6, 0, 0, 4, 6, 3, 3, 1, 0, 0, 4, 1, 4, 4, 6, 0, 0, 0, 1, 0, 2, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 4, 4, 6, 0, 0, 4, 2, 1, 1, 6, 0, 0, 4, 1, 4, 4, 2, 0, 0, 0, 1, 0, 8, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1]> : tensor<106xi64>
// CHECK: @fnn_trace_name_{{[0-9]+}}("conv2d_chain
// CHECK: llvm.call @fnn_conv2d_chain_create
// CHECK: func.func @fnn_model_run
// CHECK-NOT: llvm.call @fnn_conv2d_forward
// CHECK: llvm.call @fnn_conv2d_chain_forward({{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: llvm.call @fnn_conv2d_forward
// CHECK: return
fastnn.parameter @e trainable = dense<1.0> : tensor<6x1x1x2xf32>
fastnn.parameter @d trainable = dense<1.0> : tensor<6x3x3x1xf32>
fastnn.parameter @p trainable = dense<1.0> : tensor<2x1x1x6xf32>
func.func @forward(%i: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %e = fastnn.param @e : tensor<6x1x1x2xf32>
  %d = fastnn.param @d : tensor<6x3x3x1xf32>
  %p = fastnn.param @p : tensor<2x1x1x6xf32>
  %x = fastnn.neg %i : tensor<1x4x4x2xf32>
  %c = fastnn.conv2d %x, %e {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x2xf32>, tensor<6x1x1x2xf32>) -> tensor<1x4x4x6xf32>
  %r = fastnn.clip %c {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x4x4x6xf32>
  %w = fastnn.conv2d %r, %d {groups = 6 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x6xf32>, tensor<6x3x3x1xf32>) -> tensor<1x4x4x6xf32>
  %s = fastnn.clip %w {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<1x4x4x6xf32>
  %y = fastnn.conv2d %s, %p {layout = #fastnn.layout<nhwc>} : (tensor<1x4x4x6xf32>, tensor<2x1x1x6xf32>) -> tensor<1x4x4x2xf32>
  %a = fastnn.add %y, %x : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %a : tensor<1x4x4x2xf32>
}
