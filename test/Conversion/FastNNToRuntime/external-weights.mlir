// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime="entry=eval_step external-weights=true" > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=INIT < %t.mlir
// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime="entry=eval_step" | FileCheck %s --check-prefix=EMBEDDED

// With external-weights the trainable parameter and the statistic are listed
// for the driver, in the state table's order, with their fnn_state_role and
// fnn_dtype; the slot and the constant stay embedded.

// CHECK: module attributes {fastnn.external_weights = [{dtype = 0 : i64, name = "fc", role = 0 : i64, value = dense<5.000000e-01> : tensor<10x64xf32>}, {dtype = 0 : i64, name = "fc.m", role = 1 : i64, value = dense<[1.000000e+00, {{.*}}, 1.500000e+00]> : tensor<10xf32>}]}
// CHECK-DAG: llvm.mlir.global internal constant @fnn_init_0(dense<[2.000000e+00, {{.*}}, 4.000000e+00]> : tensor<10xf32>)
// CHECK-DAG: llvm.mlir.global external constant @fnn_model_external_weights(1 : i64)
// CHECK-DAG: llvm.mlir.global external constant @fnn_model_state_names("fcfc.mfc.slot")

// The slot is filled in place, the constant copied in; nothing else.
// INIT-LABEL: func.func @fnn_model_init(
// INIT-COUNT-1: linalg.fill
// INIT-NOT: linalg.fill
// INIT: llvm.call @fnn_copy_to_device
// INIT-NOT: llvm.call @fnn_copy_to_device
// INIT: llvm.call @fnn_matmul_create

// EMBEDDED-NOT: fastnn.external_weights
// EMBEDDED: llvm.mlir.global external constant @fnn_model_external_weights(0 : i64)
fastnn.parameter @fc trainable = dense<0.5> : tensor<10x64xf32>
fastnn.parameter @fc.m statistic = dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5]> : tensor<10xf32>
fastnn.parameter @fc.slot slot = dense<0.0> : tensor<10xf32>
func.func @eval_step(%x: tensor<2x64xf32> {fastnn.name = "images"}, %labels: tensor<2xi64> {fastnn.name = "labels"}) -> (tensor<2xf32> {fastnn.name = "loss"}, tensor<2xf32> {fastnn.name = "top1"}) {
  %w = fastnn.param @fc : tensor<10x64xf32>
  %m = fastnn.param @fc.m : tensor<10xf32>
  %slot = fastnn.param @fc.slot : tensor<10xf32>
  %two = fastnn.constant dense<[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 4.0]> : tensor<10xf32>
  %l = fastnn.matmul %x, %w {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  %s = fastnn.mul %l, %two : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %t = fastnn.add %s, %m : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %u = fastnn.add %t, %slot : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %loss = fastnn.reduce_sum %u {axes = array<i64: 1>} : tensor<2x10xf32> -> tensor<2xf32>
  %top1 = fastnn.in_top_k %u, %labels {k = 1 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %loss, %top1 : tensor<2xf32>, tensor<2xf32>
}
