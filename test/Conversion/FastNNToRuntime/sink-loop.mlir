// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime=entry=train_step | FileCheck %s

// A sunk step: fnn_model_run is one loop of 3 iterations over the body's
// code; each stores its index where the body reads it, fetches its batch
// into the images and labels buffers (which the next_batch results alias),
// and stores its result at its index of the stacked output. The kernels are
// created once, in init; the constant hoisted out of the loop is filled in
// there too.

// CHECK-LABEL: func.func @fnn_model_init(
// CHECK: linalg.fill
// CHECK: llvm.call @fnn_reduce_create
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[I64:.*]] = arith.index_cast %[[IV]] : index to i64
// CHECK: memref.store %[[I64]], %{{.*}}[] : memref<i64>
// CHECK: llvm.call @fnn_input_next(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.call @fnn_reduce_forward
// CHECK: %[[V:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.store %[[V]], %{{.*}}[%[[IV]]] : memref<3xf32>
// CHECK: }
// CHECK-NOT: fnn_reduce_forward
// CHECK: return
// The loss output is the stacked [3] values.
// CHECK: llvm.mlir.global external constant @fnn_model_io_names("imageslabelslearning_ratesteploss")
func.func @train_step(%x: tensor<2x4096xf32> {fastnn.name = "images"}, %y: tensor<2xi64> {fastnn.name = "labels"}, %lr: tensor<3xf32> {fastnn.name = "learning_rate"}, %step: tensor<i64> {fastnn.name = "step"}) -> (tensor<3xf32> {fastnn.name = "loss"}) {
  %c = fastnn.constant dense<2.0> : tensor<f32>
  %r = fastnn.loop 3 iterations {
  ^bb0(%i: tensor<i64>):
    %nx, %ny = fastnn.next_batch %x, %y : tensor<2x4096xf32>, tensor<2xi64>
    %s = fastnn.reduce_sum %nx {axes = array<i64: 0, 1>} : tensor<2x4096xf32> -> tensor<f32>
    %l = fastnn.mul %s, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
    fastnn.loop_yield %l : tensor<f32>
  } : tensor<3xf32>
  return %r : tensor<3xf32>
}
