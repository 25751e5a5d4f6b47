// RUN: fastnnc-opt %s -fastnn-dispatch-loop-bodies -split-input-file | FileCheck %s

// The call of an outlined body becomes fnn_parallel_for over a task that
// unpacks the captured arguments from a stack struct allocated in the
// caller's entry block. The body loses its markers and gets internal
// linkage.

// CHECK-LABEL: llvm.func @fnn_model_run(
// CHECK-SAME: %[[ARENA:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: f32)
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32)>
// CHECK: llvm.br ^[[NEXT:.*]]
// CHECK: ^[[NEXT]]:
// CHECK-NOT: llvm.call @fnn_model_run_loop0(
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: llvm.store %[[ARENA]], %[[F0]]
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: llvm.store %[[X]], %[[F1]]
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @fnn_model_run_loop0_task
// CHECK-DAG: %[[COUNT:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK-DAG: %[[WORK:.*]] = llvm.mlir.constant(192 : i64) : i64
// CHECK: llvm.call @fnn_parallel_for(%[[TASK]], %[[CTX]], %[[COUNT]], %[[WORK]])
// CHECK: llvm.func internal @fnn_model_run_loop0(
// CHECK-NOT: fastnn.loop
// CHECK: llvm.func internal @fnn_model_run_loop0_task(%[[C:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[C]][0, 0]
// CHECK: %[[A0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[C]][0, 1]
// CHECK: %[[A1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK: llvm.call @fnn_model_run_loop0(%[[B]], %[[E]], %[[A0]], %[[A1]])
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @fnn_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
llvm.func @fnn_model_run(%arena: !llvm.ptr, %x: f32) {
  llvm.br ^next
^next:
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c6 = llvm.mlir.constant(6 : i64) : i64
  llvm.call @fnn_model_run_loop0(%c0, %c6, %arena, %x) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}
llvm.func @fnn_model_run_loop0(%begin: i64, %end: i64, %arena: !llvm.ptr, %x: f32)
    attributes {fastnn.loop_count = 6 : i64, fastnn.loop_work = 192 : i64} {
  llvm.return
}

// -----

// A body that captures nothing gets a null context.

// CHECK-LABEL: llvm.func @run(
// CHECK-NOT: llvm.alloca
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @run_loop0_task
// CHECK: llvm.call @fnn_parallel_for(%[[TASK]], %[[NULL]],
// CHECK: llvm.func internal @run_loop0_task(
// CHECK-NOT: llvm.load
// CHECK: llvm.call @run_loop0(
llvm.func @run() {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  llvm.call @run_loop0(%c0, %c4) : (i64, i64) -> ()
  llvm.return
}
llvm.func @run_loop0(%begin: i64, %end: i64)
    attributes {fastnn.loop_count = 4 : i64, fastnn.loop_work = 8 : i64} {
  llvm.return
}
