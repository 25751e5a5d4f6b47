// RUN: fastnnc-opt %s | fastnnc-opt | FileCheck %s

// CHECK-LABEL: func.func @loop(
// CHECK: %[[R:.*]]:2 = fastnn.loop 3 iterations {
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>):
// CHECK-NEXT: %{{.*}}, %{{.*}} = fastnn.next_batch %arg0, %arg1 : tensor<2x4xf32>, tensor<2xi64>
// CHECK: fastnn.loop_yield %{{.*}}, %[[I]] : tensor<f32>, tensor<i64>
// CHECK-NEXT: } : tensor<3xf32>, tensor<3xi64>
func.func @loop(%x: tensor<2x4xf32>, %y: tensor<2xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  %r:2 = fastnn.loop 3 iterations {
  ^bb0(%i: tensor<i64>):
    %nx, %ny = fastnn.next_batch %x, %y : tensor<2x4xf32>, tensor<2xi64>
    %s = fastnn.reduce_sum %nx {axes = array<i64: 0, 1>} : tensor<2x4xf32> -> tensor<f32>
    fastnn.loop_yield %s, %i : tensor<f32>, tensor<i64>
  } : tensor<3xf32>, tensor<3xi64>
  return %r#0, %r#1 : tensor<3xf32>, tensor<3xi64>
}
