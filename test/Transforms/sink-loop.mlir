// RUN: fastnnc-opt %s -fastnn-sink-loop=iterations=4 -split-input-file | FileCheck %s
// RUN: fastnnc-opt %s -fastnn-sink-loop=iterations=1 -split-input-file | FileCheck %s --check-prefix=ONE

// The whole step moves into a loop of 4 iterations: each fetches its batch
// into the images and labels buffers, reads its own learning rate and runs
// as step + i; the parameter read and update stay inside, and every result
// stacks the 4 iterations' values.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {fastnn.name = "images"}
// CHECK-SAME: %[[Y:[^:]*]]: tensor<2xi64> {fastnn.name = "labels"}
// CHECK-SAME: %[[LR:[^:]*]]: tensor<4xf32> {fastnn.name = "learning_rate"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {fastnn.name = "step"}
// CHECK-SAME: -> (tensor<4xf32> {fastnn.name = "loss"}, tensor<4xf32> {fastnn.name = "top1"})
// CHECK-NEXT: %[[ALL:.*]]:2 = fastnn.loop 4 iterations {
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>):
// CHECK-NEXT: %[[NX:.*]], %[[NY:.*]] = fastnn.next_batch %[[X]], %[[Y]] : tensor<2x4xf32>, tensor<2xi64>
// CHECK-NEXT: %[[RATE:.*]] = fastnn.gather %[[LR]], %[[I]] {axis = 0 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<f32>
// CHECK-NEXT: %[[S:.*]] = fastnn.add %[[STEP]], %[[I]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[W:.*]] = fastnn.param @w
// CHECK-NEXT: %[[M:.*]] = fastnn.matmul %[[NX]], %[[W]]
// CHECK: fastnn.in_top_k %[[M]], %[[NY]]
// CHECK: fastnn.apply_optimizer sgd %[[W]], %{{.*}}, %[[RATE]], %[[S]] :
// CHECK-NEXT: fastnn.loop_yield %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK-NEXT: } : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: return %[[ALL]]#0, %[[ALL]]#1 : tensor<4xf32>, tensor<4xf32>

// ONE-LABEL: func.func @train_step(
// ONE-SAME: tensor<f32> {fastnn.name = "learning_rate"}
// ONE-NOT: fastnn.loop
fastnn.parameter @w trainable = dense<0.01> : tensor<4x10xf32>
func.func @train_step(%x: tensor<2x4xf32> {fastnn.name = "images"}, %y: tensor<2xi64> {fastnn.name = "labels"}, %lr: tensor<f32> {fastnn.name = "learning_rate"}, %step: tensor<i64> {fastnn.name = "step"}) -> (tensor<f32> {fastnn.name = "loss"}, tensor<f32> {fastnn.name = "top1"}) {
  %w = fastnn.param @w : tensor<4x10xf32>
  %m = fastnn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x10xf32>) -> tensor<2x10xf32>
  %loss = fastnn.reduce_sum %m {axes = array<i64: 0, 1>} : tensor<2x10xf32> -> tensor<f32>
  %hits = fastnn.in_top_k %m, %y {k = 1 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<2xf32>
  %top1 = fastnn.reduce_mean %hits {axes = array<i64: 0>} : tensor<2xf32> -> tensor<f32>
  %g = fastnn.matmul %x, %m {transpose_a} : (tensor<2x4xf32>, tensor<2x10xf32>) -> tensor<4x10xf32>
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32>, tensor<i64>) -> ()
  return %loss, %top1 : tensor<f32>, tensor<f32>
}
