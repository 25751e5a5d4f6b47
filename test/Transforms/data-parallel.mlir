// RUN: fastnnc-opt %s -fastnn-data-parallel -split-input-file | FileCheck %s
// The pass leaves what an allreduce already produces alone.
// RUN: fastnnc-opt %s -fastnn-data-parallel -fastnn-data-parallel -split-input-file | FileCheck %s

// Each gradient is averaged right where the backward pass completes it, in
// that order; the optimizer reads the means; statistics stay per worker;
// the step's results are averaged together before the return.

// CHECK-LABEL: func.func @train_step
// CHECK: %[[DW:.*]] = fastnn.matmul %{{.*}}, %{{.*}} {transpose_a}
// CHECK-NEXT: %[[MDW:.*]] = fastnn.allreduce mean %[[DW]] : tensor<4x3xf32>
// CHECK-NEXT: %[[DB:.*]] = fastnn.reduce_sum
// CHECK-NEXT: %[[MDB:.*]] = fastnn.allreduce mean %[[DB]] : tensor<4xf32>
// CHECK-NOT: fastnn.allreduce
// CHECK: fastnn.update_state %{{.*}} into %{{.*}} : tensor<4xf32>
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[MDW]],
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[MDB]],
// CHECK-NEXT: %[[M:.*]]:2 = fastnn.allreduce mean %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK-NEXT: return %[[M]]#0, %[[M]]#1, %{{.*}} : tensor<f32>, tensor<f32>, tensor<i64>
fastnn.parameter @w trainable = dense<0.1> : tensor<4x3xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
fastnn.parameter @m statistic = dense<0.0> : tensor<4xf32>
func.func @train_step(%x: tensor<2x3xf32>, %dy: tensor<2x4xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>, tensor<i64>) {
  %w = fastnn.param @w : tensor<4x3xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %m = fastnn.param @m : tensor<4xf32>
  %loss = fastnn.reduce_sum %dy {axes = array<i64: 0, 1>} : tensor<2x4xf32> -> tensor<f32>
  %top1 = fastnn.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  %dw = fastnn.matmul %dy, %x {transpose_a} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %db = fastnn.reduce_sum %dy {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<4xf32>
  %mean = fastnn.reduce_mean %dy {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<4xf32>
  fastnn.update_state %mean into %m : tensor<4xf32>
  fastnn.apply_optimizer sgd %w, %dw, %lr, %step : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<i64>) -> ()
  fastnn.apply_optimizer sgd %b, %db, %lr, %step : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> ()
  return %loss, %top1, %step : tensor<f32>, tensor<f32>, tensor<i64>
}

// -----

// A gradient that feeds two updates is averaged once.

// CHECK-LABEL: func.func @shared_gradient
// CHECK: %[[G:.*]] = fastnn.reduce_sum
// CHECK-NEXT: %[[MG:.*]] = fastnn.allreduce mean %[[G]] : tensor<4xf32>
// CHECK-NOT: fastnn.allreduce
// CHECK: fastnn.apply_optimizer sgd %{{.*}}, %[[MG]],
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[MG]],
// CHECK-NEXT: return
fastnn.parameter @a trainable = dense<0.1> : tensor<4xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<4xf32>
func.func @shared_gradient(%dy: tensor<2x4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %a = fastnn.param @a : tensor<4xf32>
  %b = fastnn.param @b : tensor<4xf32>
  %g = fastnn.reduce_sum %dy {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<4xf32>
  fastnn.apply_optimizer sgd %a, %g, %lr, %step : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> ()
  fastnn.apply_optimizer sgd %b, %g, %lr, %step : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> ()
  return
}

// -----

// A function that updates no parameter (an evaluation step) is not a
// training step: its per-sample results are not averaged.

// CHECK-LABEL: func.func @eval_step
// CHECK-NOT: fastnn.allreduce
func.func @eval_step(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %loss = fastnn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x4xf32> -> tensor<2xf32>
  return %loss : tensor<2xf32>
}
