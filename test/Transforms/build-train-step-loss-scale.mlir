// RUN: fastnnc-opt %s -fastnn-build-train-step="optimizer=sgd weight-decay=0 loss-scale=128" | FileCheck %s --check-prefix=STATIC
// RUN: fastnnc-opt %s -fastnn-build-train-step="optimizer=sgd weight-decay=0 loss-scale=32768 dynamic-loss-scale=true" | FileCheck %s --check-prefix=DYNAMIC
// RUN: fastnnc-opt %s -fastnn-build-train-step="optimizer=sgd weight-decay=0" | FileCheck %s --check-prefix=NONE

// Static: the backward pass starts from 128 instead of 1 and each gradient
// is divided by it right where it is complete.

// STATIC-LABEL: func.func @train_step(
// STATIC-NOT: attributes
// STATIC-DAG: %[[SEED:.*]] = fastnn.constant dense<1.280000e+02> : tensor<f32>
// STATIC-DAG: %[[INV:.*]] = fastnn.constant dense<7.812500e-03> : tensor<f32>
// STATIC: fastnn.mul %[[SEED]], %{{.*}}
// STATIC: %[[DW:.*]] = fastnn.matmul %{{.*}} {transpose_a}
// STATIC-NEXT: %[[UNSCALED:.*]] = fastnn.mul %[[DW]], %[[INV]]
// STATIC: fastnn.apply_optimizer sgd %{{.*}}, %[[UNSCALED]],

// Dynamic: the scale is slot state the function names for
// fastnn-dynamic-loss-scale, read at the start of the step.

// DYNAMIC: fastnn.parameter @loss_scale slot = dense<3.276800e+04> : tensor<f32>
// DYNAMIC-LABEL: func.func @train_step(
// DYNAMIC-SAME: attributes {fastnn.loss_scale = @loss_scale}
// DYNAMIC-NEXT: %[[S:.*]] = fastnn.param @loss_scale : tensor<f32>
// DYNAMIC: %[[INV:.*]] = fastnn.div %{{.*}}, %[[S]]
// DYNAMIC: fastnn.mul %[[S]], %{{.*}}
// DYNAMIC: %[[DW:.*]] = fastnn.matmul %{{.*}} {transpose_a}
// DYNAMIC-NEXT: fastnn.mul %[[DW]], %[[INV]]
// DYNAMIC-NOT: fastnn.all_finite
// DYNAMIC: return

// NONE-LABEL: func.func @train_step(
// NONE-NOT: loss_scale
// NONE: %[[DW:.*]] = fastnn.matmul %{{.*}} {transpose_a}
// NONE-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[DW]],
fastnn.parameter @fc trainable = dense<0.01> : tensor<4x10xf32>
func.func @forward(%x: tensor<2x4xf32> {fastnn.name = "images"}) -> tensor<2x10xf32> {
  %fc = fastnn.param @fc : tensor<4x10xf32>
  %l = fastnn.matmul %x, %fc : (tensor<2x4xf32>, tensor<4x10xf32>) -> tensor<2x10xf32>
  return %l : tensor<2x10xf32>
}
