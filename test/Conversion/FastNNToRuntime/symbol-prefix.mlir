// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime="entry=eval_step symbol-prefix=fnn_eval initialize-state=false" > %t.eval.mlir
// RUN: FileCheck %s < %t.eval.mlir
// RUN: FileCheck %s --check-prefix=NONE < %t.eval.mlir
// RUN: FileCheck %s --check-prefix=INIT < %t.eval.mlir
// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime="entry=eval_step" > %t.model.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.model.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT-INIT < %t.model.mlir

// The evaluation step train.bin holds beside the training step: every
// exported symbol of model.h under the prefix fnn_eval, everything else
// internal, so the two objects link into one executable.

// CHECK-DAG: llvm.mlir.global internal constant @fnn_desc_0(
// CHECK-DAG: llvm.mlir.global internal constant @fnn_init_0(dense<[2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<10xf32>)
// CHECK-DAG: llvm.mlir.global internal constant @fnn_trace_name_0(
// CHECK-DAG: llvm.mlir.global internal @fnn_kernel_table(
// CHECK-DAG: func.func @fnn_eval_init(
// CHECK-DAG: func.func @fnn_eval_run(
// CHECK-DAG: func.func @fnn_eval_release(
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_arena_bytes(
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_io(
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_io_names("imageslabelslosstop1")
// State records: role, dtype, rank, dims, offset, name offset and length.
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_state(dense<[2, 0, 0, 2, 10, 64, 0, 0, 0, 0, {{[0-9]+}}, 0, 2, 1, 0, 1, 10, 0, 0, 0, 0, 0, {{[0-9]+}}, 2, 4]> : tensor<25xi64>)
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_state_names("fcfc.m")
// CHECK-DAG: llvm.mlir.global external constant @fnn_eval_config(

// NONE-NOT: @fnn_model_
// NONE-NOT: @fnn_init_1

// The caller fills the state: only the constant is copied in at init.
// INIT-LABEL: func.func @fnn_eval_init(
// INIT: llvm.call @fnn_copy_to_device
// INIT-NOT: llvm.call @fnn_copy_to_device
// INIT: llvm.call @fnn_matmul_create

// By default the symbols are fnn_model_* and parameters are initialised.
// DEFAULT-DAG: func.func @fnn_model_init(
// DEFAULT-DAG: func.func @fnn_model_run(
// DEFAULT-DAG: func.func @fnn_model_release(
// DEFAULT-DAG: llvm.mlir.global external constant @fnn_model_state_names("fcfc.m")
// DEFAULT-INIT-LABEL: func.func @fnn_model_init(
// DEFAULT-INIT: linalg.fill
// DEFAULT-INIT-COUNT-2: llvm.call @fnn_copy_to_device
// DEFAULT-INIT-NOT: llvm.call @fnn_copy_to_device
// DEFAULT-INIT: llvm.call @fnn_matmul_create
fastnn.parameter @fc trainable = dense<0.5> : tensor<10x64xf32>
fastnn.parameter @fc.m statistic = dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5]> : tensor<10xf32>
func.func @eval_step(%x: tensor<2x64xf32> {fastnn.name = "images"}, %labels: tensor<2xi64> {fastnn.name = "labels"}) -> (tensor<2xf32> {fastnn.name = "loss"}, tensor<2xf32> {fastnn.name = "top1"}) {
  %w = fastnn.param @fc : tensor<10x64xf32>
  %m = fastnn.param @fc.m : tensor<10xf32>
  %two = fastnn.constant dense<[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 4.0]> : tensor<10xf32>
  %l = fastnn.matmul %x, %w {transpose_b} : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  %s = fastnn.mul %l, %two : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %t = fastnn.add %s, %m : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %loss = fastnn.reduce_sum %t {axes = array<i64: 1>} : tensor<2x10xf32> -> tensor<2xf32>
  %top1 = fastnn.in_top_k %t, %labels {k = 1 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %loss, %top1 : tensor<2xf32>, tensor<2xf32>
}
