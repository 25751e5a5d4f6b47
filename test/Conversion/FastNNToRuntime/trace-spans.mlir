// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// Every op that does work runs inside a span named "<op> <location name>":
// the kernel call of the conv and the loop nest of the add. The reshape is
// a view and the relu is fused into the conv: neither has a span. Span
// names are internal constants, one per distinct name.

// CHECK-DAG: llvm.mlir.global internal constant @[[CONV:fnn_trace_name_[0-9]+]]("conv2d conv1/Conv2D\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[ADD:fnn_trace_name_[0-9]+]]("add fc/Add\00")
// CHECK-DAG: llvm.func @fnn_trace_begin(!llvm.ptr)
// CHECK-DAG: llvm.func @fnn_trace_end()
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: %[[NAME:.*]] = llvm.mlir.addressof @[[CONV]]
// CHECK-NEXT: llvm.call @fnn_trace_begin(%[[NAME]])
// CHECK-NOT: fnn_trace_
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NEXT: %[[NAME2:.*]] = llvm.mlir.addressof @[[ADD]]
// CHECK-NEXT: llvm.call @fnn_trace_begin(%[[NAME2]])
// CHECK-NOT: fnn_trace_
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: }
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NEXT: return
// CHECK-LABEL: func.func @fnn_model_release(
// CHECK-NOT: fnn_trace_
// CHECK: return
fastnn.parameter @w trainable = dense<1.0> : tensor<4x1x3x3xf32>
fastnn.parameter @b trainable = dense<0.5> : tensor<64xf32>
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x64xf32> {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %b = fastnn.param @b : tensor<64xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> loc("conv1/Conv2D")
  %r = fastnn.relu %c : tensor<1x4x4x4xf32> loc("conv1/Relu")
  %f = fastnn.reshape %r : tensor<1x4x4x4xf32> -> tensor<1x64xf32> loc("flatten")
  %y = fastnn.add %f, %b : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32> loc("fc/Add")
  return %y : tensor<1x64xf32>
}

// -----

// Locations without a node name: a fused location names its first named
// part; a file location gives the file's base name and line. Ops with the
// same name share one string. (Every result is also returned, so that no op
// is computed inside its user's loop and each keeps its span.)

// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("exp node_a\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("neg model.onnx:7\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[SQRT:.*]]("sqrt\00")
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: llvm.mlir.addressof @[[SQRT]]
// CHECK: llvm.mlir.addressof @[[SQRT]]
func.func @forward(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = fastnn.exp %x : tensor<8xf32> loc(fused["model.onnx":3:0, "node_a"("model.onnx":0:0)])
  %b = fastnn.neg %a : tensor<8xf32> loc("/models/model.onnx":7:2)
  %c = fastnn.sqrt %b : tensor<8xf32> loc(unknown)
  %d = fastnn.sqrt %c : tensor<8xf32> loc(unknown)
  return %a, %b, %c, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
