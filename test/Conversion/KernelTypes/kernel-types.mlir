// RUN: fastnnc-opt %s -fastnn-kernel-types -split-input-file | FileCheck %s

// Softmax, the reductions and LRN have float32 kernels only: their
// half-precision operands are widened and their results rounded back.
// Pooling and convolution have half-precision kernels and keep their types;
// float32 ops are untouched.

// CHECK-LABEL: func.func @forward
// CHECK: %[[XW:.*]] = fastnn.cast %arg0 {to = f32} : tensor<4x6xf16> -> tensor<4x6xf32>
// CHECK-NEXT: %[[MAX:.*]] = fastnn.reduce_max %[[XW]] {{.*}} : tensor<4x6xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[M:.*]] = fastnn.cast %[[MAX]] {to = f16} : tensor<4x1xf32> -> tensor<4x1xf16>
// CHECK: %[[SW:.*]] = fastnn.cast %{{.*}} {to = f32} : tensor<4x6xf16> -> tensor<4x6xf32>
// CHECK-NEXT: %[[SM:.*]] = fastnn.softmax %[[SW]] {axis = 1 : i64} : tensor<4x6xf32>
// CHECK-NEXT: fastnn.cast %[[SM]] {to = f16} : tensor<4x6xf32> -> tensor<4x6xf16>
// CHECK: %[[YW:.*]] = fastnn.cast %arg1 {to = f32} : tensor<1x4x2x2xbf16> -> tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[N:.*]] = fastnn.lrn %[[YW]] {size = 3 : i64} : tensor<1x4x2x2xf32>
// CHECK-NEXT: fastnn.cast %[[N]] {to = bf16} : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xbf16>
// CHECK: fastnn.max_pool2d %arg1 {{.*}} : tensor<1x4x2x2xbf16> -> tensor<1x4x1x1xbf16>
// CHECK: fastnn.reduce_sum %arg2 {{.*}} : tensor<4x6xf32> -> tensor<4xf32>
// CHECK-NOT: fastnn.cast
// CHECK: return
func.func @forward(%x: tensor<4x6xf16>, %y: tensor<1x4x2x2xbf16>, %z: tensor<4x6xf32>) -> (tensor<4x6xf16>, tensor<1x4x2x2xbf16>, tensor<1x4x1x1xbf16>, tensor<4xf32>) {
  %m = fastnn.reduce_max %x {axes = array<i64: 1>, keepdims} : tensor<4x6xf16> -> tensor<4x1xf16>
  %d = fastnn.sub %x, %m : (tensor<4x6xf16>, tensor<4x1xf16>) -> tensor<4x6xf16>
  %s = fastnn.softmax %d {axis = 1 : i64} : tensor<4x6xf16>
  %n = fastnn.lrn %y {size = 3 : i64} : tensor<1x4x2x2xbf16>
  %p = fastnn.max_pool2d %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x2x2xbf16> -> tensor<1x4x1x1xbf16>
  %r = fastnn.reduce_sum %z {axes = array<i64: 1>} : tensor<4x6xf32> -> tensor<4xf32>
  return %s, %n, %p, %r : tensor<4x6xf16>, tensor<1x4x2x2xbf16>, tensor<1x4x1x1xbf16>, tensor<4xf32>
}

// -----

// A backward op made from its forward op's kernel runs in the forward's
// type: pooling's gradient stays bf16; LRN's is widened with its forward
// and reads the forward's float32 result, not its rounding.
// CHECK-LABEL: func.func @backward
// CHECK: %[[N:.*]] = fastnn.lrn %{{.*}} : tensor<1x4x2x2xf32>
// CHECK: fastnn.lrn_backward %{{.*}}, %[[N]], %{{.*}} : tensor<1x4x2x2xf32>
// CHECK: fastnn.pool2d_backward %{{.*}}, %{{.*}} : (tensor<1x4x1x1xbf16>, tensor<1x4x1x1xbf16>) -> tensor<1x4x2x2xbf16>
func.func @backward(%x: tensor<1x4x2x2xbf16>, %g: tensor<1x4x1x1xbf16>) -> (tensor<1x4x2x2xbf16>, tensor<1x4x2x2xbf16>) {
  %n = fastnn.lrn %x {size = 3 : i64} : tensor<1x4x2x2xbf16>
  %dn = fastnn.lrn_backward %x, %n, %x {size = 3 : i64} : tensor<1x4x2x2xbf16>
  %p = fastnn.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x2x2xbf16> -> tensor<1x4x1x1xbf16>
  %dp = fastnn.pool2d_backward %p, %g : (tensor<1x4x1x1xbf16>, tensor<1x4x1x1xbf16>) -> tensor<1x4x2x2xbf16>
  return %dn, %dp : tensor<1x4x2x2xbf16>, tensor<1x4x2x2xbf16>
}
