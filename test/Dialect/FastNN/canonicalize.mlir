// RUN: fastnnc-opt %s -canonicalize -split-input-file | FileCheck %s

// Exporters compute a Reshape's target shape at run time:
// Shape -> Gather -> Unsqueeze -> Concat. With static shapes it is a constant.
// CHECK-LABEL: func.func @shape_chain
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[8, -1]> : tensor<2xi64>
// CHECK-NEXT: return %[[C]]
func.func @shape_chain() -> tensor<2xi64> {
  %shape = fastnn.constant dense<[8, 512, 7, 7]> : tensor<4xi64>
  %zero = fastnn.constant dense<0> : tensor<i64>
  %batch = fastnn.gather %shape, %zero {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %unsqueezed = fastnn.reshape %batch : tensor<i64> -> tensor<1xi64>
  %rest = fastnn.constant dense<-1> : tensor<1xi64>
  %target = fastnn.concat %unsqueezed, %rest {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %target : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = fastnn.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = fastnn.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = fastnn.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fastnn.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = fastnn.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi32>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x2xi32> {
  %0 = fastnn.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %1 = fastnn.reshape %0 : tensor<4xi32> -> tensor<2x2xi32>
  return %1 : tensor<2x2xi32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fastnn.transpose %x {permutation = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// [1, 0, 2] then [0, 2, 1] reads x at [1, 2, 0].
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = fastnn.transpose %[[X]] {permutation = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = fastnn.transpose %x {permutation = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = fastnn.transpose %0 {permutation = array<i64: 0, 2, 1>} : tensor<3x2x4xf32> -> tensor<3x4x2xf32>
  return %1 : tensor<3x4x2xf32>
}

// -----

// NCHW -> NHWC -> NCHW cancels.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x5xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %0 = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<1x3x4x5xf32> -> tensor<1x4x5x3xf32>
  %1 = fastnn.transpose %0 {permutation = array<i64: 0, 3, 1, 2>} : tensor<1x4x5x3xf32> -> tensor<1x3x4x5xf32>
  return %1 : tensor<1x3x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_splat
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<2.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @transpose_splat() -> tensor<3x2xf32> {
  %0 = fastnn.constant dense<2.0> : tensor<2x3xf32>
  %1 = fastnn.transpose %0 {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// A non-splat float constant is not transposed at compile time (the layout
// pass may cancel the transpose); a small integer one (shape arithmetic,
// e.g. the legacy exporter's pads of Swin's windows) is.
// CHECK-LABEL: func.func @transpose_int_constant
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<{{\[}}[0, 0, 0, 0], [0, 5, 5, 0]]> : tensor<2x4xi64>
// CHECK-NEXT: return %[[C]]
func.func @transpose_int_constant() -> tensor<2x4xi64> {
  %0 = fastnn.constant dense<[[0, 0], [0, 5], [0, 5], [0, 0]]> : tensor<4x2xi64>
  %1 = fastnn.transpose %0 {permutation = array<i64: 1, 0>} : tensor<4x2xi64> -> tensor<2x4xi64>
  return %1 : tensor<2x4xi64>
}

// -----

// Constants broadcast (Expand) and binary ops of broadcast operands fold:
// [[0], [10]] + [1, 2, 3] is [[1, 2, 3], [11, 12, 13]].
// CHECK-LABEL: func.func @broadcast_constants
// CHECK-DAG: %[[E:.*]] = fastnn.constant dense<{{\[}}[0, 0, 0], [10, 10, 10]]> : tensor<2x3xi64>
// CHECK-DAG: %[[S:.*]] = fastnn.constant dense<{{\[}}[1, 2, 3], [11, 12, 13]]> : tensor<2x3xi64>
// CHECK: return %[[E]], %[[S]]
func.func @broadcast_constants() -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %column = fastnn.constant dense<[[0], [10]]> : tensor<2x1xi64>
  %row = fastnn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %e = fastnn.broadcast %column : tensor<2x1xi64> -> tensor<2x3xi64>
  %s = fastnn.add %column, %row : (tensor<2x1xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return %e, %s : tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_constant_not_folded
// CHECK: fastnn.transpose
func.func @transpose_constant_not_folded() -> tensor<3x2xf32> {
  %0 = fastnn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %1 = fastnn.transpose %0 {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// A transpose that moves only dimensions of size 1 (a 1x1 filter from
// OIHW to OHWI) keeps the bytes where they are: a reshape, an alias.
// CHECK-LABEL: func.func @transpose_of_unit_dims
// CHECK-SAME: (%[[W:.*]]: tensor<64x32x1x1xf32>)
// CHECK-NEXT: %[[R:.*]] = fastnn.reshape %[[W]] : tensor<64x32x1x1xf32> -> tensor<64x1x1x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose_of_unit_dims(%w: tensor<64x32x1x1xf32>) -> tensor<64x1x1x32xf32> {
  %0 = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<64x32x1x1xf32> -> tensor<64x1x1x32xf32>
  return %0 : tensor<64x1x1x32xf32>
}

// -----

// A 3x3 filter's channels move past its spatial dimensions: a transpose.
// CHECK-LABEL: func.func @transpose_of_spatial_dims
// CHECK-NEXT: fastnn.transpose
func.func @transpose_of_spatial_dims(%w: tensor<64x32x3x3xf32>) -> tensor<64x3x3x32xf32> {
  %0 = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<64x32x3x3xf32> -> tensor<64x3x3x32xf32>
  return %0 : tensor<64x3x3x32xf32>
}

// -----

// CHECK-LABEL: func.func @cast_noop
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT: return %[[X]]
func.func @cast_noop(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fastnn.cast %x {to = f32} : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Float to integer truncates towards zero.
// CHECK-LABEL: func.func @cast_float_to_int
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[1, -2, 0, 3]> : tensor<4xi32>
// CHECK-NEXT: return %[[C]]
func.func @cast_float_to_int() -> tensor<4xi32> {
  %0 = fastnn.constant dense<[1.5, -2.7, -0.5, 3.0]> : tensor<4xf32>
  %1 = fastnn.cast %0 {to = i32} : tensor<4xf32> -> tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @cast_int_to_float
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[-3.000000e+00, 0.000000e+00, 1.600000e+01]> : tensor<3xf16>
// CHECK-NEXT: return %[[C]]
func.func @cast_int_to_float() -> tensor<3xf16> {
  %0 = fastnn.constant dense<[-3, 0, 16]> : tensor<3xi64>
  %1 = fastnn.cast %0 {to = f16} : tensor<3xi64> -> tensor<3xf16>
  return %1 : tensor<3xf16>
}

// -----

// ui8 and bool convert as unsigned values.
// CHECK-LABEL: func.func @cast_unsigned_to_float
// CHECK-DAG: fastnn.constant dense<[2.550000e+02, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: fastnn.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: fastnn.constant dense<[255, 1]> : tensor<2xi32>
func.func @cast_unsigned_to_float() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
  %0 = fastnn.constant dense<[255, 1]> : tensor<2xui8>
  %1 = fastnn.cast %0 {to = f32} : tensor<2xui8> -> tensor<2xf32>
  %2 = fastnn.constant dense<[true, false]> : tensor<2xi1>
  %3 = fastnn.cast %2 {to = f32} : tensor<2xi1> -> tensor<2xf32>
  %4 = fastnn.cast %0 {to = i32} : tensor<2xui8> -> tensor<2xi32>
  return %1, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
}

// -----

// ONNX casts to bool by comparing with zero; truncating to one bit would make
// 1.0 false (saturated) and 2 false (low bit).
// CHECK-LABEL: func.func @cast_to_bool
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[false, true, true, true]> : tensor<4xi1>
// CHECK-NEXT: return %[[C]], %[[C]]
func.func @cast_to_bool() -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = fastnn.constant dense<[0.0, 1.0, 0.5, -2.0]> : tensor<4xf32>
  %1 = fastnn.cast %0 {to = i1} : tensor<4xf32> -> tensor<4xi1>
  %2 = fastnn.constant dense<[0, 1, 2, -1]> : tensor<4xi64>
  %3 = fastnn.cast %2 {to = i1} : tensor<4xi64> -> tensor<4xi1>
  return %1, %3 : tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @cast_float_to_float
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[1.000000e+00, 3.140630e+00]> : tensor<2xbf16>
// CHECK-NEXT: return %[[C]]
func.func @cast_float_to_float() -> tensor<2xbf16> {
  %0 = fastnn.constant dense<[1.0, 3.14159]> : tensor<2xf32>
  %1 = fastnn.cast %0 {to = bf16} : tensor<2xf32> -> tensor<2xbf16>
  return %1 : tensor<2xbf16>
}

// -----

// CHECK-LABEL: func.func @add_zero_int
// CHECK-SAME: (%[[X:.*]]: tensor<3xi64>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @add_zero_int(%x: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
  %zero = fastnn.constant dense<0> : tensor<3xi64>
  %0 = fastnn.add %x, %zero : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = fastnn.add %zero, %x : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0, %1 : tensor<3xi64>, tensor<3xi64>
}

// -----

// x + -0.0 is x for every x, including -0.0.
// CHECK-LABEL: func.func @add_negative_zero_float
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @add_negative_zero_float(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = fastnn.constant dense<-0.0> : tensor<3xf32>
  %0 = fastnn.add %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// -0.0 + 0.0 is +0.0, so x + 0.0 is not x.
// CHECK-LABEL: func.func @add_positive_zero_float_not_folded
// CHECK: %[[R:.*]] = fastnn.add
// CHECK: return %[[R]]
func.func @add_positive_zero_float_not_folded(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = fastnn.constant dense<0.0> : tensor<3xf32>
  %0 = fastnn.add %x, %zero : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Adding zero broadcasts x to a larger type: not an identity.
// CHECK-LABEL: func.func @add_zero_broadcast_not_folded
// CHECK: %[[R:.*]] = fastnn.add %{{.*}}, %{{.*}} : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK: return %[[R]]
func.func @add_zero_broadcast_not_folded(%x: tensor<3xi32>) -> tensor<2x3xi32> {
  %zero = fastnn.constant dense<0> : tensor<2x3xi32>
  %0 = fastnn.add %x, %zero : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = fastnn.constant dense<0.0> : tensor<4xf32>
  %one = fastnn.constant dense<1.0> : tensor<4xf32>
  %0 = fastnn.sub %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fastnn.mul %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = fastnn.div %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = fastnn.pow %x, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// -0.0 - -0.0 is +0.0, so x - (-0.0) is not x.
// CHECK-LABEL: func.func @sub_negative_zero_not_folded
// CHECK: fastnn.sub
func.func @sub_negative_zero_not_folded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = fastnn.constant dense<-0.0> : tensor<4xf32>
  %0 = fastnn.sub %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_one_broadcast_not_folded
// CHECK: fastnn.mul
func.func @mul_one_broadcast_not_folded(%x: tensor<1xf32>) -> tensor<4xf32> {
  %one = fastnn.constant dense<1.0> : tensor<4xf32>
  %0 = fastnn.mul %x, %one : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @binary_constants
// CHECK-DAG: fastnn.constant dense<[5, 7]> : tensor<2xi64>
// CHECK-DAG: fastnn.constant dense<[-3, 3]> : tensor<2xi64>
// CHECK-DAG: fastnn.constant dense<[-24, 4]> : tensor<2xi64>
// CHECK-DAG: fastnn.constant dense<[-3, 1]> : tensor<2xi64>
// CHECK-DAG: fastnn.constant dense<[2.000000e+00, 5.000000e+00]> : tensor<2xf32>
// CHECK-DAG: fastnn.constant dense<-1.000000e+00> : tensor<2xf32>
// CHECK-NOT: fastnn.add
// CHECK-NOT: fastnn.sub
// CHECK-NOT: fastnn.mul
// CHECK-NOT: fastnn.div
// CHECK-NOT: fastnn.max
// CHECK-NOT: fastnn.min
func.func @binary_constants() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>) {
  %a = fastnn.constant dense<[-1, 5]> : tensor<2xi64>
  %b = fastnn.constant dense<[6, 2]> : tensor<2xi64>
  %s = fastnn.add %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %c = fastnn.constant dense<[-7, 5]> : tensor<2xi64>
  %d = fastnn.constant dense<[-4, 2]> : tensor<2xi64>
  %t = fastnn.sub %c, %d : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %m = fastnn.mul %b, %d : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // Integer division truncates towards zero: -7 / 2 = -3.
  %e = fastnn.constant dense<[2, 3]> : tensor<2xi64>
  %q = fastnn.div %c, %e : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %f = fastnn.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %g = fastnn.constant dense<[-1.0, 5.0]> : tensor<2xf32>
  %hi = fastnn.max %f, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %lo = fastnn.min %f, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = fastnn.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %lo2 = fastnn.min %lo, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s, %t, %m, %q, %hi, %lo2 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xf32>, tensor<2xf32>
}

// -----

// ui8 values are unsigned: 200 / 2 = 100, max(200, 1) = 200, min = 1.
// CHECK-LABEL: func.func @unsigned_constants
// CHECK-DAG: fastnn.constant dense<100> : tensor<1xui8>
// CHECK-DAG: fastnn.constant dense<200> : tensor<1xui8>
// CHECK-DAG: fastnn.constant dense<1> : tensor<1xui8>
// CHECK-NOT: fastnn.div
// CHECK-NOT: fastnn.max
// CHECK-NOT: fastnn.min
func.func @unsigned_constants() -> (tensor<1xui8>, tensor<1xui8>, tensor<1xui8>) {
  %a = fastnn.constant dense<200> : tensor<1xui8>
  %b = fastnn.constant dense<2> : tensor<1xui8>
  %c = fastnn.constant dense<1> : tensor<1xui8>
  %q = fastnn.div %a, %b : (tensor<1xui8>, tensor<1xui8>) -> tensor<1xui8>
  %hi = fastnn.max %a, %c : (tensor<1xui8>, tensor<1xui8>) -> tensor<1xui8>
  %lo = fastnn.min %a, %c : (tensor<1xui8>, tensor<1xui8>) -> tensor<1xui8>
  return %q, %hi, %lo : tensor<1xui8>, tensor<1xui8>, tensor<1xui8>
}

// -----

// A zero divisor, and INT_MIN / -1, are left for run time.
// CHECK-LABEL: func.func @int_div_not_folded
// CHECK: fastnn.div
// CHECK: fastnn.div
func.func @int_div_not_folded() -> (tensor<2xi32>, tensor<1xi8>) {
  %a = fastnn.constant dense<[4, 5]> : tensor<2xi32>
  %b = fastnn.constant dense<[2, 0]> : tensor<2xi32>
  %0 = fastnn.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %min = fastnn.constant dense<-128> : tensor<1xi8>
  %m1 = fastnn.constant dense<-1> : tensor<1xi8>
  %1 = fastnn.div %min, %m1 : (tensor<1xi8>, tensor<1xi8>) -> tensor<1xi8>
  return %0, %1 : tensor<2xi32>, tensor<1xi8>
}

// -----

// Float division by zero is IEEE: it folds to infinity.
// CHECK-LABEL: func.func @float_div_by_zero
// CHECK-NEXT: fastnn.constant dense<0x7F800000> : tensor<1xf32>
func.func @float_div_by_zero() -> tensor<1xf32> {
  %a = fastnn.constant dense<1.0> : tensor<1xf32>
  %b = fastnn.constant dense<0.0> : tensor<1xf32>
  %0 = fastnn.div %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// A splat constant broadcast to the other operand's shape folds (shape
// arithmetic: a shape divided by a one-element constant).
// CHECK-LABEL: func.func @broadcast_splat_folded
// CHECK-NEXT: fastnn.constant dense<[2, 3]> : tensor<2xi64>
func.func @broadcast_splat_folded() -> tensor<2xi64> {
  %a = fastnn.constant dense<[1, 2]> : tensor<2xi64>
  %b = fastnn.constant dense<1> : tensor<1xi64>
  %0 = fastnn.add %a, %b : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @neg_constant
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<[-1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]]
func.func @neg_constant() -> tensor<2xf32> {
  %0 = fastnn.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %1 = fastnn.neg %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[D:.*]] = fastnn.dropout %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[X]], %[[D]]
func.func @dropout(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fastnn.dropout %x {ratio = 0.0 : f64} : tensor<4xf32>
  %1 = fastnn.dropout %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pad_zeros
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @pad_zeros(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = fastnn.pad %x {pads = array<i64: 0, 0, 0, 0>, value = 1.0 : f64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = fastnn.pad %x {pads = array<i64: 0, 0, 0, 0>, mode = #fastnn.pad_mode<reflect>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @pad_not_folded
// CHECK: fastnn.pad
func.func @pad_not_folded(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = fastnn.pad %x {pads = array<i64: 0, 0, 0, 1>} : tensor<2x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @clip_to_relu
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.*]] = fastnn.relu %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = fastnn.clip %[[X]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = fastnn.clip %[[X]] {max = 0x7FF0000000000000 : f64, min = -1.000000e+00 : f64} : tensor<4xf32>
// CHECK-NEXT: return %[[R]], %[[C]], %[[N]]
func.func @clip_to_relu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fastnn.clip %x {min = 0.0 : f64, max = 0x7FF0000000000000 : f64} : tensor<4xf32>
  %1 = fastnn.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %2 = fastnn.clip %x {min = -1.0 : f64, max = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @slice_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R:.*]] = fastnn.slice %[[X]] {offsets = array<i64: 1, 2>, steps = array<i64: -1, -1>}
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @slice_identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = fastnn.slice %x {offsets = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = fastnn.slice %x {offsets = array<i64: 1, 2>, steps = array<i64: -1, -1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_constant
// CHECK-DAG: fastnn.constant dense<{{\[\[}}6, 4], [3, 1]]> : tensor<2x2xi64>
// CHECK-DAG: fastnn.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NOT: fastnn.slice
func.func @slice_constant() -> (tensor<2x2xi64>, tensor<2xi64>) {
  %0 = fastnn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  // Both dimensions reversed, every second column.
  %1 = fastnn.slice %0 {offsets = array<i64: 1, 2>, steps = array<i64: -1, -2>} : tensor<2x3xi64> -> tensor<2x2xi64>
  %2 = fastnn.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %3 = fastnn.slice %2 {offsets = array<i64: 1>, steps = array<i64: 1>} : tensor<4xi64> -> tensor<2xi64>
  return %1, %3 : tensor<2x2xi64>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @gather_constant
// CHECK-DAG: fastnn.constant dense<[7, 5]> : tensor<2xi64>
// CHECK-DAG: fastnn.constant dense<{{\[\[}}3, 1], [6, 4]]> : tensor<2x2xi32>
// CHECK-NOT: fastnn.gather
func.func @gather_constant() -> (tensor<2xi64>, tensor<2x2xi32>) {
  %shape = fastnn.constant dense<[5, 6, 7]> : tensor<3xi64>
  // Negative indices count from the end.
  %i = fastnn.constant dense<[-1, 0]> : tensor<2xi64>
  %0 = fastnn.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %m = fastnn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %j = fastnn.constant dense<[2, -3]> : tensor<2xi32>
  %1 = fastnn.gather %m, %j {axis = 1 : i64} : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x2xi32>
  return %0, %1 : tensor<2xi64>, tensor<2x2xi32>
}

// -----

// An index out of range is a run-time error, not something to fold.
// CHECK-LABEL: func.func @gather_out_of_range_not_folded
// CHECK: fastnn.gather
func.func @gather_out_of_range_not_folded() -> tensor<1xi64> {
  %shape = fastnn.constant dense<[5, 6, 7]> : tensor<3xi64>
  %i = fastnn.constant dense<3> : tensor<1xi64>
  %0 = fastnn.gather %shape, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

// -----

// CHECK-LABEL: func.func @concat_constants_inner_axis
// CHECK-NEXT: %[[C:.*]] = fastnn.constant dense<{{\[\[}}1, 2, 5], [3, 4, 6]]> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]
func.func @concat_constants_inner_axis() -> tensor<2x3xi64> {
  %a = fastnn.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %b = fastnn.constant dense<[[5], [6]]> : tensor<2x1xi64>
  %0 = fastnn.concat %a, %b {axis = 1 : i64} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fastnn.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_not_all_constant
// CHECK: fastnn.concat
func.func @concat_not_all_constant(%x: tensor<1xi64>) -> tensor<2xi64> {
  %a = fastnn.constant dense<4> : tensor<1xi64>
  %0 = fastnn.concat %a, %x {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
