// RUN: fastnnc-opt %s -fastnn-clip-gradients="max-norm=5.0" | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-clip-gradients | FileCheck %s --check-prefix=OFF
// RUN: fastnnc-opt %s -fastnn-data-parallel -fastnn-clip-gradients="max-norm=5.0" | FileCheck %s --check-prefix=DP

// tf.clip_by_global_norm right before the first update: the norm of every
// gradient, then g * 5 / max(norm, 5) for each.

// CHECK-LABEL: func.func @train_step
// CHECK: fastnn.update_state
// CHECK-NEXT: %[[SQW:.*]] = fastnn.mul %[[DW:.*]], %[[DW]] : (tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-NEXT: %[[SW:.*]] = fastnn.reduce_sum %[[SQW]] {axes = array<i64: 0, 1>}
// CHECK-NEXT: %[[SQB:.*]] = fastnn.mul %[[DB:.*]], %[[DB]] : (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[SB:.*]] = fastnn.reduce_sum %[[SQB]] {axes = array<i64: 0>}
// CHECK-NEXT: %[[SUM:.*]] = fastnn.add %[[SW]], %[[SB]]
// CHECK-NEXT: %[[CLIP:.*]] = fastnn.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NORM:.*]] = fastnn.sqrt %[[SUM]]
// CHECK-NEXT: %[[MAX:.*]] = fastnn.max %[[NORM]], %[[CLIP]]
// CHECK-NEXT: %[[FACTOR:.*]] = fastnn.div %[[CLIP]], %[[MAX]]
// CHECK-NEXT: %[[CW:.*]] = fastnn.mul %[[DW]], %[[FACTOR]]
// CHECK-NEXT: %[[CB:.*]] = fastnn.mul %[[DB]], %[[FACTOR]]
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[CW]],
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[CB]],

// OFF-LABEL: func.func @train_step
// OFF-NOT: fastnn.sqrt
// OFF: fastnn.apply_optimizer sgd %{{.*}}, %{{.*}}, %arg2

// After fastnn-data-parallel, the norm is the averaged gradients'.
// DP-LABEL: func.func @train_step
// DP: %[[MDW:.*]] = fastnn.allreduce mean
// DP: %[[MDB:.*]] = fastnn.allreduce mean
// DP: fastnn.mul %[[MDW]], %[[MDW]]
// DP: fastnn.mul %[[MDB]], %[[MDB]]
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4xf32>
func.func @train_step(%x: tensor<2x3xf32>, %dy: tensor<2x4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %w = fastnn.param @w : tensor<4x3xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %dw = fastnn.matmul %dy, %x {transpose_a} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %db = fastnn.reduce_sum %dy {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<4xf32>
  fastnn.update_state %db into %m : tensor<4xf32>
  fastnn.apply_optimizer sgd %w, %dw, %lr, %step : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<i64>) -> ()
  fastnn.apply_optimizer sgd %b, %db, %lr, %step : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> ()
  return
}
