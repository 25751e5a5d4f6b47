// RUN: fastnnc-opt %s -fastnn-random-masks -split-input-file | FileCheck %s

// PyTorch's train-mode dropout: draw < keep, cast, divided by keep. The mask
// keeps the draw's seed.

// CHECK-LABEL: func.func @dropout(
// CHECK-NOT: random_uniform
// CHECK-NOT: fastnn.less
// CHECK: %[[M:.*]] = fastnn.random_mask {probability = 0.80000001{{[0-9]*}} : f64, seed = 7 : i64} : tensor<2x16xf32>
// CHECK: fastnn.div %[[M]]
func.func @dropout(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %u = fastnn.random_uniform {seed = 7 : i64} : tensor<2x16xf32>
  %p = fastnn.constant dense<0.8> : tensor<f32>
  %b = fastnn.less %u, %p : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xi1>
  %m = fastnn.cast %b {to = f32} : tensor<2x16xi1> -> tensor<2x16xf32>
  %s = fastnn.div %m, %p : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %y = fastnn.mul %x, %s : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// The probability from the draw's bounds, for each way round: u > 0.25 on
// [-1, 1) holds with 0.375, 0.25 > u with 0.625; bounds outside the range
// clamp.

// CHECK-LABEL: func.func @bounds(
// CHECK: fastnn.random_mask {probability = 3.750000e-01 : f64, seed = 1 : i64} : tensor<4xf32>
// CHECK: fastnn.random_mask {probability = 6.250000e-01 : f64, seed = 2 : i64} : tensor<4xf16>
// CHECK: fastnn.random_mask {probability = 1.000000e+00 : f64, seed = 3 : i64} : tensor<4xf32>
func.func @bounds() -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) {
  %c = fastnn.constant dense<0.25> : tensor<f32>
  %u1 = fastnn.random_uniform {low = -1.0 : f64, high = 1.0 : f64, seed = 1 : i64} : tensor<4xf32>
  %b1 = fastnn.greater %u1, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %m1 = fastnn.cast %b1 {to = f32} : tensor<4xi1> -> tensor<4xf32>
  %u2 = fastnn.random_uniform {low = -1.0 : f64, high = 1.0 : f64, seed = 2 : i64} : tensor<4xf32>
  %b2 = fastnn.greater %c, %u2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xi1>
  %m2 = fastnn.cast %b2 {to = f16} : tensor<4xi1> -> tensor<4xf16>
  %big = fastnn.constant dense<3.0> : tensor<f32>
  %u3 = fastnn.random_uniform {seed = 3 : i64} : tensor<4xf32>
  %b3 = fastnn.less %u3, %big : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %m3 = fastnn.cast %b3 {to = f32} : tensor<4xi1> -> tensor<4xf32>
  return %m1, %m2, %m3 : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>
}

// -----

// Left alone: a draw read elsewhere too, a comparison with a non-constant,
// a boolean mask (no cast), and a comparison that broadcasts the draw.

// CHECK-LABEL: func.func @kept(
// CHECK-NOT: random_mask
// CHECK-COUNT-4: fastnn.random_uniform
// CHECK-NOT: random_mask
func.func @kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %c = fastnn.constant dense<0.5> : tensor<f32>
  %u1 = fastnn.random_uniform {seed = 1 : i64} : tensor<4xf32>
  %b1 = fastnn.less %u1, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %m1 = fastnn.cast %b1 {to = f32} : tensor<4xi1> -> tensor<4xf32>
  %u2 = fastnn.random_uniform {seed = 2 : i64} : tensor<4xf32>
  %b2 = fastnn.less %u2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %m2 = fastnn.cast %b2 {to = f32} : tensor<4xi1> -> tensor<4xf32>
  %u3 = fastnn.random_uniform {seed = 3 : i64} : tensor<4xf32>
  %b3 = fastnn.less %u3, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %u4 = fastnn.random_uniform {seed = 4 : i64} : tensor<1xf32>
  %b4 = fastnn.less %u4, %x : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xi1>
  %m4 = fastnn.cast %b4 {to = f32} : tensor<4xi1> -> tensor<4xf32>
  return %u1, %m1, %m2, %b3, %m4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}
