// RUN: fastnnc-opt %s -fastnn-layout="input-layout=model" -split-input-file | FileCheck %s --check-prefix=LAYOUT
// RUN: fastnnc-opt %s -fastnn-mixed-precision=precision=bf16 -split-input-file | FileCheck %s --check-prefix=MIXED

// The passes ask the ops' traits, not lists of their own. LayoutAgnostic:
// fastnn-layout moves transposes through pow and sign (which its list
// missed), so the pair meets and cancels.

// LAYOUT-LABEL: func.func @pow_sign(
// LAYOUT-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x4x5xf32>, %[[E:[a-z0-9]+]]: tensor<f32>
// LAYOUT-NEXT: %[[P:.*]] = fastnn.pow %[[X]], %[[E]] : (tensor<2x3x4x5xf32>, tensor<f32>) -> tensor<2x3x4x5xf32>
// LAYOUT-NEXT: %[[S:.*]] = fastnn.sign %[[P]] : tensor<2x3x4x5xf32>
// LAYOUT-NEXT: return %[[S]]
func.func @pow_sign(%x: tensor<2x3x4x5xf32>, %e: tensor<f32>) -> tensor<2x3x4x5xf32> {
  %t = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %p = fastnn.pow %t, %e : (tensor<2x4x5x3xf32>, tensor<f32>) -> tensor<2x4x5x3xf32>
  %s = fastnn.sign %p : tensor<2x4x5x3xf32>
  %b = fastnn.transpose %s {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  return %b : tensor<2x3x4x5xf32>
}

// -----

// The masked gradients are layout-agnostic too.

// LAYOUT-LABEL: func.func @masked_gradient(
// LAYOUT-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x4x5xf32>, %[[DY:[a-z0-9]+]]: tensor<2x3x4x5xf32>
// LAYOUT-NEXT: %[[G:.*]] = fastnn.relu_backward %[[X]], %[[DY]] : tensor<2x3x4x5xf32>
// LAYOUT-NEXT: return %[[G]]
func.func @masked_gradient(%x: tensor<2x3x4x5xf32>, %dy: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %tx = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %tdy = fastnn.transpose %dy {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %g = fastnn.relu_backward %tx, %tdy : tensor<2x4x5x3xf32>
  %b = fastnn.transpose %g {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  return %b : tensor<2x3x4x5xf32>
}

// -----

// Elementwise but not layout-agnostic: dropout_train's mask depends on the
// element's position, so the transposes stay where they are.

// LAYOUT-LABEL: func.func @position_dependent(
// LAYOUT: %[[T:.*]] = fastnn.transpose
// LAYOUT-NEXT: %[[D:.*]] = fastnn.dropout_train %[[T]]
// LAYOUT-NEXT: fastnn.transpose %[[D]]
func.func @position_dependent(%x: tensor<2x3x4x5xf32>, %step: tensor<i64>) -> tensor<2x3x4x5xf32> {
  %t = fastnn.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  %d = fastnn.dropout_train %t, %step {ratio = 0.5 : f64, seed = 1 : i64} : tensor<2x4x5x3xf32>, tensor<i64>
  %b = fastnn.transpose %d {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x4x5x3xf32> -> tensor<2x3x4x5xf32>
  return %b : tensor<2x3x4x5xf32>
}

// -----

// Precision roles: conv2d is LowPrecision (bf16 from f32 inputs);
// batch_norm and neg are FollowsPrecision (bf16 because their activation
// arrives in it), and ActivationsOpInterface keeps batch_norm's scale,
// bias and statistics f32; pow and exp have neither trait and read the
// widened f32 value.

// MIXED-LABEL: func.func @roles(
// MIXED: %[[C:.*]] = fastnn.conv2d {{.*}} -> tensor<2x4x6x6xbf16>
// MIXED-NEXT: %[[B:.*]] = fastnn.batch_norm %[[C]], {{.*}} : (tensor<2x4x6x6xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xbf16>
// MIXED-NEXT: %[[N:.*]] = fastnn.neg %[[B]] : tensor<2x4x6x6xbf16>
// MIXED-NEXT: %[[W:.*]] = fastnn.cast %[[N]] {to = f32}
// MIXED-NEXT: fastnn.pow %[[W]], %[[W]] : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
// MIXED-NEXT: fastnn.exp %[[W]] : tensor<2x4x6x6xf32>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3x3x3xf32>
fastnn.parameter @s trainable = dense<1.0> : tensor<4xf32>
func.func @roles(%x: tensor<2x3x8x8xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %w = fastnn.param @w : tensor<4x3x3x3xf32>
  %s = fastnn.param @s : tensor<4xf32>
  %c = fastnn.conv2d %x, %w : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %b = fastnn.batch_norm %c, %s, %s, %s, %s : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %n = fastnn.neg %b : tensor<2x4x6x6xf32>
  %p = fastnn.pow %n, %n : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %e = fastnn.exp %n : tensor<2x4x6x6xf32>
  return %p, %e : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}
