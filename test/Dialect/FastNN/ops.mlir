// RUN: fastnnc-opt %s | fastnnc-opt | FileCheck %s
// RUN: fastnnc-opt %s --mlir-print-op-generic | fastnnc-opt | FileCheck %s

// CHECK: fastnn.parameter @conv.weight trainable = dense_resource<conv_w> : tensor<2x1x1x1xf32>
fastnn.parameter @conv.weight trainable = dense_resource<conv_w> : tensor<2x1x1x1xf32>
// CHECK: fastnn.parameter @bn.running_mean statistic = dense<0.000000e+00> : tensor<2xf32>
fastnn.parameter @bn.running_mean statistic = dense<0.0> : tensor<2xf32>
// CHECK: fastnn.parameter @fc.bias trainable = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
fastnn.parameter @fc.bias trainable = dense<[1.0, 2.0]> : tensor<2xbf16>

// CHECK-LABEL: func.func @param
func.func @param() -> (tensor<2x1x1x1xf32>, tensor<2xf32>, tensor<2xbf16>) {
  // CHECK: fastnn.param @conv.weight : tensor<2x1x1x1xf32>
  // CHECK: fastnn.param @bn.running_mean : tensor<2xf32>
  // CHECK: fastnn.param @fc.bias : tensor<2xbf16>
  %0 = fastnn.param @conv.weight : tensor<2x1x1x1xf32>
  %1 = fastnn.param @bn.running_mean : tensor<2xf32>
  %2 = fastnn.param @fc.bias : tensor<2xbf16>
  return %0, %1, %2 : tensor<2x1x1x1xf32>, tensor<2xf32>, tensor<2xbf16>
}

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2xi64>, tensor<f32>, tensor<2x2xi1>) {
  // CHECK: fastnn.constant dense<[1, -1]> : tensor<2xi64>
  // CHECK: fastnn.constant dense<5.000000e-01> : tensor<f32>
  // CHECK: fastnn.constant dense<{{\[\[}}true, false], [false, true]]> : tensor<2x2xi1>
  %0 = fastnn.constant dense<[1, -1]> : tensor<2xi64>
  %1 = fastnn.constant dense<0.5> : tensor<f32>
  %2 = fastnn.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  return %0, %1, %2 : tensor<2xi64>, tensor<f32>, tensor<2x2xi1>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>) -> (tensor<1x64x112x112xf32>, tensor<1x64x218x218xf32>) {
  // CHECK: fastnn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = fastnn.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: fastnn.conv2d %{{.*}}, %{{.*}} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x218x218xf32>
  %1 = fastnn.conv2d %x, %w : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x218x218xf32>
  return %0, %1 : tensor<1x64x112x112xf32>, tensor<1x64x218x218xf32>
}

// Grouped and dilated: 8 channels in 2 groups of 4; a 3x3 kernel dilated by
// 2 spans 5 rows.
// CHECK-LABEL: func.func @conv2d_groups_dilations
func.func @conv2d_groups_dilations(%x: tensor<2x8x10x10xf16>, %w: tensor<6x4x3x3xf16>) -> tensor<2x6x6x6xf16> {
  // CHECK: fastnn.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, groups = 2 : i64} : (tensor<2x8x10x10xf16>, tensor<6x4x3x3xf16>) -> tensor<2x6x6x6xf16>
  %0 = fastnn.conv2d %x, %w {dilations = array<i64: 2, 2>, groups = 2 : i64}
      : (tensor<2x8x10x10xf16>, tensor<6x4x3x3xf16>) -> tensor<2x6x6x6xf16>
  return %0 : tensor<2x6x6x6xf16>
}

// CHECK-LABEL: func.func @conv2d_depthwise_nhwc
func.func @conv2d_depthwise_nhwc(%x: tensor<1x9x7x32xf32>, %w: tensor<32x3x3x1xf32>, %b: tensor<32xf32>) -> tensor<1x4x3x32xf32> {
  // CHECK: fastnn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 32 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 0, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x9x7x32xf32>, tensor<32x3x3x1xf32>, tensor<32xf32>) -> tensor<1x4x3x32xf32>
  %0 = fastnn.conv2d %x, %w, %b {groups = 32 : i64, layout = #fastnn.layout<nhwc>, pads = array<i64: 0, 1, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x9x7x32xf32>, tensor<32x3x3x1xf32>, tensor<32xf32>) -> tensor<1x4x3x32xf32>
  return %0 : tensor<1x4x3x32xf32>
}

// CHECK-LABEL: func.func @max_pool2d
func.func @max_pool2d(%x: tensor<1x64x112x112xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) {
  // CHECK: fastnn.max_pool2d %{{.*}} {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  // floor((112 - 3) / 2) + 1 = 55 without ceil_mode, 56 with it.
  // CHECK: fastnn.max_pool2d %{{.*}} {ceil_mode, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %1 = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode}
      : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  return %0, %1 : tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @max_pool2d_dilated_nhwc
func.func @max_pool2d_dilated_nhwc(%x: tensor<2x10x10x3xbf16>) -> tensor<2x6x6x3xbf16> {
  // CHECK: fastnn.max_pool2d %{{.*}} {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 3, 3>, layout = #fastnn.layout<nhwc>} : tensor<2x10x10x3xbf16> -> tensor<2x6x6x3xbf16>
  %0 = fastnn.max_pool2d %x {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 2>, layout = #fastnn.layout<nhwc>}
      : tensor<2x10x10x3xbf16> -> tensor<2x6x6x3xbf16>
  return %0 : tensor<2x6x6x3xbf16>
}

// CHECK-LABEL: func.func @avg_pool2d
func.func @avg_pool2d(%x: tensor<1x8x7x7xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32>) {
  // CHECK: fastnn.avg_pool2d %{{.*}} {kernel_shape = array<i64: 7, 7>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  %0 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 7, 7>} : tensor<1x8x7x7xf32> -> tensor<1x8x1x1xf32>
  // CHECK: fastnn.avg_pool2d %{{.*}} {ceil_mode, count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x7x7xf32> -> tensor<1x8x4x4xf32>
  %1 = fastnn.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode, count_include_pad}
      : tensor<1x8x7x7xf32> -> tensor<1x8x4x4xf32>
  return %0, %1 : tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<8x64x56x56xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<8x64x56x56xf32> {
  // CHECK: fastnn.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64, momentum = 5.000000e-01 : f64} : (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x56x56xf32>
  %0 = fastnn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f64, momentum = 0.5 : f64}
      : (tensor<8x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x56x56xf32>
  return %0 : tensor<8x64x56x56xf32>
}

// CHECK-LABEL: func.func @batch_norm_nhwc
func.func @batch_norm_nhwc(%x: tensor<8x5x5x3xf16>, %p: tensor<3xf16>) -> tensor<8x5x5x3xf16> {
  // CHECK: fastnn.batch_norm %{{.*}} {layout = #fastnn.layout<nhwc>} : (tensor<8x5x5x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<8x5x5x3xf16>
  %0 = fastnn.batch_norm %x, %p, %p, %p, %p {layout = #fastnn.layout<nhwc>}
      : (tensor<8x5x5x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<8x5x5x3xf16>
  return %0 : tensor<8x5x5x3xf16>
}

// CHECK-LABEL: func.func @lrn
func.func @lrn(%x: tensor<1x64x27x27xf32>) -> tensor<1x64x27x27xf32> {
  // CHECK: fastnn.lrn %{{.*}} {alpha = 2.000000e-05 : f64, bias = 2.000000e+00 : f64, size = 5 : i64} : tensor<1x64x27x27xf32>
  %0 = fastnn.lrn %x {size = 5 : i64, alpha = 2.0e-5 : f64, beta = 0.75 : f64, bias = 2.0 : f64} : tensor<1x64x27x27xf32>
  return %0 : tensor<1x64x27x27xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<8x512xf32>, %b: tensor<512x10xf32>, %w: tensor<10x512xf32>, %c: tensor<3x1x4x5xf32>, %d: tensor<7x5x6xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>, tensor<3x7x4x6xf32>, tensor<512x512xf32>) {
  // CHECK: fastnn.matmul %{{.*}}, %{{.*}} : (tensor<8x512xf32>, tensor<512x10xf32>) -> tensor<8x10xf32>
  %0 = fastnn.matmul %a, %b : (tensor<8x512xf32>, tensor<512x10xf32>) -> tensor<8x10xf32>
  // CHECK: fastnn.matmul %{{.*}}, %{{.*}} {transpose_b} : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
  %1 = fastnn.matmul %a, %w {transpose_b} : (tensor<8x512xf32>, tensor<10x512xf32>) -> tensor<8x10xf32>
  // CHECK: fastnn.matmul %{{.*}}, %{{.*}} : (tensor<3x1x4x5xf32>, tensor<7x5x6xf32>) -> tensor<3x7x4x6xf32>
  %2 = fastnn.matmul %c, %d : (tensor<3x1x4x5xf32>, tensor<7x5x6xf32>) -> tensor<3x7x4x6xf32>
  // CHECK: fastnn.matmul %{{.*}}, %{{.*}} {transpose_a} : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
  %3 = fastnn.matmul %a, %a {transpose_a} : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
  return %0, %1, %2, %3 : tensor<8x10xf32>, tensor<8x10xf32>, tensor<3x7x4x6xf32>, tensor<512x512xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<2x3xf32>, %row: tensor<3xf32>, %col: tensor<2x1xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>) {
  // CHECK: fastnn.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.sub %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.mul %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.div %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.max %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.min %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.add %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %0 = fastnn.add %x, %row : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = fastnn.sub %row, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = fastnn.mul %col, %row : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = fastnn.div %x, %col : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %4 = fastnn.max %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = fastnn.min %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = fastnn.pow %x, %row : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = fastnn.add %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: fastnn.neg %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.abs %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.exp %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.log %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.sqrt %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.reciprocal %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.relu %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.sigmoid %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.tanh %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.erf %{{.*}} : tensor<2x3xf32>
  %0 = fastnn.neg %x : tensor<2x3xf32>
  %1 = fastnn.abs %x : tensor<2x3xf32>
  %2 = fastnn.exp %x : tensor<2x3xf32>
  %3 = fastnn.log %x : tensor<2x3xf32>
  %4 = fastnn.sqrt %x : tensor<2x3xf32>
  %5 = fastnn.reciprocal %x : tensor<2x3xf32>
  %6 = fastnn.relu %x : tensor<2x3xf32>
  %7 = fastnn.sigmoid %x : tensor<2x3xf32>
  %8 = fastnn.tanh %x : tensor<2x3xf32>
  %9 = fastnn.erf %x : tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @activations_with_attributes
func.func @activations_with_attributes(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  // CHECK: fastnn.leaky_relu %{{.*}} : tensor<4xf64>
  // CHECK: fastnn.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64} : tensor<4xf64>
  // CHECK: fastnn.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf64>
  // CHECK: fastnn.dropout %{{.*}} : tensor<4xf64>
  // CHECK: fastnn.dropout %{{.*}} {ratio = 1.000000e-01 : f64} : tensor<4xf64>
  %0 = fastnn.leaky_relu %x : tensor<4xf64>
  %1 = fastnn.leaky_relu %x {alpha = 0.2 : f64} : tensor<4xf64>
  %2 = fastnn.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf64>
  %3 = fastnn.dropout %x : tensor<4xf64>
  %4 = fastnn.dropout %x {ratio = 0.1 : f64} : tensor<4xf64>
  return %0, %1, %2, %3, %4 : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%f: tensor<2x3xf32>, %i: tensor<2x3xi64>, %b: tensor<2x3xi1>) -> (tensor<2x3xi32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xui8>) {
  // CHECK: fastnn.cast %{{.*}} {to = i32} : tensor<2x3xf32> -> tensor<2x3xi32>
  // CHECK: fastnn.cast %{{.*}} {to = f16} : tensor<2x3xi64> -> tensor<2x3xf16>
  // CHECK: fastnn.cast %{{.*}} {to = bf16} : tensor<2x3xf32> -> tensor<2x3xbf16>
  // CHECK: fastnn.cast %{{.*}} {to = f32} : tensor<2x3xi1> -> tensor<2x3xf32>
  // CHECK: fastnn.cast %{{.*}} {to = ui8} : tensor<2x3xi64> -> tensor<2x3xui8>
  %0 = fastnn.cast %f {to = i32} : tensor<2x3xf32> -> tensor<2x3xi32>
  %1 = fastnn.cast %i {to = f16} : tensor<2x3xi64> -> tensor<2x3xf16>
  %2 = fastnn.cast %f {to = bf16} : tensor<2x3xf32> -> tensor<2x3xbf16>
  %3 = fastnn.cast %b {to = f32} : tensor<2x3xi1> -> tensor<2x3xf32>
  %4 = fastnn.cast %i {to = ui8} : tensor<2x3xi64> -> tensor<2x3xui8>
  return %0, %1, %2, %3, %4 : tensor<2x3xi32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xui8>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>) {
  // CHECK: fastnn.softmax %{{.*}} {axis = 1 : i64} : tensor<8x10xf32>
  // CHECK: fastnn.log_softmax %{{.*}} {axis = 0 : i64} : tensor<8x10xf32>
  %0 = fastnn.softmax %x {axis = 1 : i64} : tensor<8x10xf32>
  %1 = fastnn.log_softmax %x {axis = 0 : i64} : tensor<8x10xf32>
  return %0, %1 : tensor<8x10xf32>, tensor<8x10xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4x5xf32>, %i: tensor<6xi32>) -> (tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<3x5xf32>, tensor<2x3x4x5xf32>, tensor<i32>) {
  // CHECK: fastnn.reduce_mean %{{.*}} {axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  // CHECK: fastnn.reduce_sum %{{.*}} {axes = array<i64: 2, 3>} : tensor<2x3x4x5xf32> -> tensor<2x3xf32>
  // CHECK: fastnn.reduce_max %{{.*}} {axes = array<i64: 0, 2>} : tensor<2x3x4x5xf32> -> tensor<3x5xf32>
  // CHECK: fastnn.reduce_min %{{.*}} {axes = array<i64>} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  // CHECK: fastnn.reduce_sum %{{.*}} {axes = array<i64: 0>} : tensor<6xi32> -> tensor<i32>
  %0 = fastnn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  %1 = fastnn.reduce_sum %x {axes = array<i64: 2, 3>} : tensor<2x3x4x5xf32> -> tensor<2x3xf32>
  %2 = fastnn.reduce_max %x {axes = array<i64: 0, 2>} : tensor<2x3x4x5xf32> -> tensor<3x5xf32>
  %3 = fastnn.reduce_min %x {axes = array<i64>} : tensor<2x3x4x5xf32> -> tensor<2x3x4x5xf32>
  %4 = fastnn.reduce_sum %i {axes = array<i64: 0>} : tensor<6xi32> -> tensor<i32>
  return %0, %1, %2, %3, %4 : tensor<2x3x1x1xf32>, tensor<2x3xf32>, tensor<3x5xf32>, tensor<2x3x4x5xf32>, tensor<i32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<1x64x28x28xf32>, %b: tensor<1x32x28x28xf32>, %s: tensor<1xi64>) -> (tensor<1x160x28x28xf32>, tensor<3xi64>) {
  // CHECK: fastnn.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x160x28x28xf32>
  // CHECK: fastnn.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %0 = fastnn.concat %a, %b, %a {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x160x28x28xf32>
  %1 = fastnn.concat %s, %s, %s {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %0, %1 : tensor<1x160x28x28xf32>, tensor<3xi64>
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<8x512x1x1xf32>, %s: tensor<i64>) -> (tensor<8x512xf32>, tensor<1xi64>) {
  // CHECK: fastnn.reshape %{{.*}} : tensor<8x512x1x1xf32> -> tensor<8x512xf32>
  // CHECK: fastnn.reshape %{{.*}} : tensor<i64> -> tensor<1xi64>
  %0 = fastnn.reshape %x : tensor<8x512x1x1xf32> -> tensor<8x512xf32>
  %1 = fastnn.reshape %s : tensor<i64> -> tensor<1xi64>
  return %0, %1 : tensor<8x512xf32>, tensor<1xi64>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x3x224x200xf32>) -> tensor<1x224x200x3xf32> {
  // CHECK: fastnn.transpose %{{.*}} {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x224x200xf32> -> tensor<1x224x200x3xf32>
  %0 = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x224x200xf32> -> tensor<1x224x200x3xf32>
  return %0 : tensor<1x224x200x3xf32>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<1x3x4x4xf32>, %i: tensor<3xi32>) -> (tensor<1x3x6x7xf32>, tensor<1x3x7x6xf32>, tensor<1x3x8x8xf32>, tensor<5xi32>) {
  // CHECK: fastnn.pad %{{.*}} {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x7xf32>
  // CHECK: fastnn.pad %{{.*}} {mode = #fastnn.pad_mode<reflect>, pads = array<i64: 0, 0, 3, 0, 0, 0, 0, 2>} : tensor<1x3x4x4xf32> -> tensor<1x3x7x6xf32>
  // CHECK: fastnn.pad %{{.*}} {mode = #fastnn.pad_mode<edge>, pads = array<i64: 0, 0, 2, 2, 0, 0, 2, 2>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  // CHECK: fastnn.pad %{{.*}} {pads = array<i64: 1, 1>, value = -1.000000e+00 : f64} : tensor<3xi32> -> tensor<5xi32>
  %0 = fastnn.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x6x7xf32>
  %1 = fastnn.pad %x {pads = array<i64: 0, 0, 3, 0, 0, 0, 0, 2>, mode = #fastnn.pad_mode<reflect>} : tensor<1x3x4x4xf32> -> tensor<1x3x7x6xf32>
  %2 = fastnn.pad %x {pads = array<i64: 0, 0, 2, 2, 0, 0, 2, 2>, mode = #fastnn.pad_mode<edge>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  %3 = fastnn.pad %i {pads = array<i64: 1, 1>, value = -1.0 : f64} : tensor<3xi32> -> tensor<5xi32>
  return %0, %1, %2, %3 : tensor<1x3x6x7xf32>, tensor<1x3x7x6xf32>, tensor<1x3x8x8xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x10xf32>) -> (tensor<2x5xf32>, tensor<4x10xf32>, tensor<1x0xf32>) {
  // CHECK: fastnn.slice %{{.*}} {offsets = array<i64: 1, 0>, steps = array<i64: 1, 2>} : tensor<4x10xf32> -> tensor<2x5xf32>
  // Negative steps walk backwards: this reverses both dimensions.
  // CHECK: fastnn.slice %{{.*}} {offsets = array<i64: 3, 9>, steps = array<i64: -1, -1>} : tensor<4x10xf32> -> tensor<4x10xf32>
  // CHECK: fastnn.slice %{{.*}} {offsets = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x10xf32> -> tensor<1x0xf32>
  %0 = fastnn.slice %x {offsets = array<i64: 1, 0>, steps = array<i64: 1, 2>} : tensor<4x10xf32> -> tensor<2x5xf32>
  %1 = fastnn.slice %x {offsets = array<i64: 3, 9>, steps = array<i64: -1, -1>} : tensor<4x10xf32> -> tensor<4x10xf32>
  %2 = fastnn.slice %x {offsets = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x10xf32> -> tensor<1x0xf32>
  return %0, %1, %2 : tensor<2x5xf32>, tensor<4x10xf32>, tensor<1x0xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%x: tensor<5x4x3xf32>, %i: tensor<2x2xi64>, %j: tensor<i32>) -> (tensor<5x2x2x3xf32>, tensor<4x3xf32>) {
  // CHECK: fastnn.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<5x4x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3xf32>
  // CHECK: fastnn.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<5x4x3xf32>, tensor<i32>) -> tensor<4x3xf32>
  %0 = fastnn.gather %x, %i {axis = 1 : i64} : (tensor<5x4x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3xf32>
  %1 = fastnn.gather %x, %j {axis = 0 : i64} : (tensor<5x4x3xf32>, tensor<i32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<5x2x2x3xf32>, tensor<4x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x040000000000803F00000040"
    }
  }
#-}

// CHECK-LABEL: func.func @allreduce
func.func @allreduce(%a: tensor<4x3xf32>, %b: tensor<4xf32>, %c: tensor<f32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<f32>) {
  // CHECK: %{{.*}}:2 = fastnn.allreduce mean %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4xf32>
  // CHECK: fastnn.allreduce sum %{{.*}} : tensor<f32>
  %0:2 = fastnn.allreduce mean %a, %b : tensor<4x3xf32>, tensor<4xf32>
  %1 = fastnn.allreduce sum %c : tensor<f32>
  return %0#0, %0#1, %1 : tensor<4x3xf32>, tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @comparisons_logic_select
func.func @comparisons_logic_select(%x: tensor<2x3xf32>, %row: tensor<3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>) {
  // CHECK: fastnn.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: fastnn.less %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: fastnn.greater %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: fastnn.and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: fastnn.not %{{.*}} : tensor<2x3xi1>
  // CHECK: fastnn.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: fastnn.mod %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  // CHECK: fastnn.mod %{{.*}}, %{{.*}} {fmod} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = fastnn.equal %x, %row : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = fastnn.less %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = fastnn.greater %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %3 = fastnn.and %0, %1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %4 = fastnn.not %3 : tensor<2x3xi1>
  %5 = fastnn.select %4, %x, %row : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = fastnn.mod %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %7 = fastnn.mod %x, %row {fmod} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<4xi64>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @rounding_and_trigonometry
func.func @rounding_and_trigonometry(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: fastnn.sin %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.cos %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.softplus %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.floor %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.ceil %{{.*}} : tensor<2x3xf32>
  // CHECK: fastnn.round %{{.*}} : tensor<2x3xf32>
  %0 = fastnn.sin %x : tensor<2x3xf32>
  %1 = fastnn.cos %x : tensor<2x3xf32>
  %2 = fastnn.softplus %x : tensor<2x3xf32>
  %3 = fastnn.floor %x : tensor<2x3xf32>
  %4 = fastnn.ceil %x : tensor<2x3xf32>
  %5 = fastnn.round %x : tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @random_draws
// CHECK: fastnn.random_uniform {low = -1.000000e+00 : f64, seed = 3 : i64} : tensor<2x4xf32>
// CHECK: fastnn.random_normal %{{.*}} : tensor<i64> {scale = 2.000000e+00 : f64, seed = 4 : i64} : tensor<8xf16>
// CHECK: fastnn.random_mask %{{.*}} : tensor<i64> {probability = 7.500000e-01 : f64, seed = 5 : i64} : tensor<2x1x1x1xf32>
func.func @random_draws(%step: tensor<i64>) -> (tensor<2x4xf32>, tensor<8xf16>, tensor<2x1x1x1xf32>) {
  %u = fastnn.random_uniform {low = -1.0 : f64, seed = 3 : i64} : tensor<2x4xf32>
  %n = fastnn.random_normal %step : tensor<i64> {scale = 2.0 : f64, seed = 4 : i64} : tensor<8xf16>
  %m = fastnn.random_mask %step : tensor<i64> {probability = 0.75 : f64, seed = 5 : i64} : tensor<2x1x1x1xf32>
  return %u, %n, %m : tensor<2x4xf32>, tensor<8xf16>, tensor<2x1x1x1xf32>
}
