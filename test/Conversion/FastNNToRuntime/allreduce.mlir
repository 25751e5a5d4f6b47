// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// A bucket is one buffer: each input's producer writes its slice (exp at
// 0, neg right after it at 128), the collective reduces the 64 elements in
// place (descriptor: count, dtype f32, op mean), starting where the
// allreduce stands. Its wait comes right before the first reader of a
// result (the add), so the sqrt in between overlaps the communication.

// CHECK-LABEL: module
// CHECK-DAG: llvm.mlir.global internal constant @[[DESC:fnn_desc_[0-9]+]](dense<[64, 0, 1]> : tensor<3xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("allreduce bucket0\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("allreduce_wait bucket0\00")
// CHECK: func.func @fnn_model_init(
// CHECK: %[[D:.*]] = llvm.mlir.addressof @[[DESC]]
// CHECK-NEXT: llvm.call @fnn_allreduce_create(%{{.*}}, %[[D]])
// CHECK: func.func @fnn_model_run(
// CHECK: memref.view %{{.*}}[%c0{{.*}}] : memref<768xi8> to memref<2x16xf32>
// CHECK-NEXT: linalg.generic
// CHECK: math.exp
// CHECK: memref.view %{{.*}}[%c128{{.*}}] : memref<768xi8> to memref<2x16xf32>
// CHECK-NEXT: linalg.generic
// CHECK: arith.negf
// CHECK-NOT: linalg.copy
// CHECK: %[[BUCKET:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NOT: llvm.call
// CHECK: llvm.call @fnn_allreduce_start(%{{.*}}, %[[BUCKET]])
// CHECK: math.sqrt
// CHECK: llvm.call @fnn_allreduce_wait
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NEXT: llvm.mlir.addressof
// CHECK-NEXT: llvm.call @fnn_trace_begin
// CHECK: memref.view %{{.*}}[%c0{{.*}}]
// CHECK: arith.addf
// CHECK: func.func @fnn_model_release(
// CHECK: llvm.call @fnn_kernel_destroy
func.func @forward(%x: tensor<2x16xf32>, %y: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %a = fastnn.exp %x : tensor<2x16xf32>
  %b = fastnn.neg %y : tensor<2x16xf32>
  %r:2 = fastnn.allreduce mean %a, %b : tensor<2x16xf32>, tensor<2x16xf32> loc("bucket0")
  %c = fastnn.sqrt %y : tensor<2x16xf32>
  %d = fastnn.add %r#0, %c : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %d, %r#1 : tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Slices start at aligned offsets: 24 bytes, then the next slice at 64; the
// count covers both (22 elements, the padding included). Inputs that
// cannot be reduced where they are are copied into their slice before the
// start: %a is read again after the collective starts, %y is a function
// input. With no reader of a result, the wait comes before the return.

// CHECK-LABEL: module
// CHECK: llvm.mlir.global internal constant @fnn_desc_0(dense<[22, 0, 0]> : tensor<3xi64>)
// CHECK: func.func @fnn_model_run(
// CHECK: math.exp
// CHECK: %[[SLICE0:.*]] = memref.view %{{.*}}[%c0{{.*}}]
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x3xf32>) outs(%[[SLICE0]] : memref<2x3xf32>)
// CHECK: %[[SLICE1:.*]] = memref.view %{{.*}}[%c64{{.*}}]
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x3xf32>) outs(%[[SLICE1]] : memref<2x3xf32>)
// CHECK: llvm.call @fnn_allreduce_start
// CHECK: arith.negf
// CHECK: llvm.call @fnn_allreduce_wait
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NEXT: return
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = fastnn.exp %x : tensor<2x3xf32>
  %r:2 = fastnn.allreduce sum %a, %y : tensor<2x3xf32>, tensor<2x3xf32>
  %n = fastnn.neg %a : tensor<2x3xf32>
  return %n : tensor<2x3xf32>
}

// -----

// A bucket keeps its memory until the collective is awaited: with no
// reader of the result, the exp after the start may not take the slice the
// collective is still writing.

// CHECK-LABEL: module
// CHECK: func.func @fnn_model_run(
// CHECK: memref.view
// CHECK-NEXT: arith.constant [[SLICE:[0-9]+]] : index
// CHECK-NEXT: %[[OUT:.*]] = memref.view
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[OUT]] :
// CHECK: arith.negf
// CHECK: llvm.call @fnn_allreduce_start
// CHECK-NOT: arith.constant [[SLICE]] : index
// CHECK: math.exp
// CHECK: llvm.call @fnn_allreduce_wait
func.func @forward(%x: tensor<256xf32>) -> tensor<256xf32> {
  %a = fastnn.neg %x : tensor<256xf32>
  %r = fastnn.allreduce mean %a : tensor<256xf32>
  %e = fastnn.exp %x : tensor<256xf32>
  return %e : tensor<256xf32>
}

// -----

// A step sunk into a loop (iterations_per_loop): every iteration starts its
// collective and awaits it before the iteration ends, even when nothing
// reads the result, so that the next iteration can start it again.

// CHECK-LABEL: module
// CHECK: func.func @fnn_model_run(
// CHECK: scf.for
// CHECK: llvm.call @fnn_allreduce_start
// CHECK: math.exp
// CHECK: linalg.fill
// CHECK: arith.addf
// CHECK: llvm.call @fnn_allreduce_wait
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NOT: llvm.call
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<2xf32>
// CHECK-NEXT: }
func.func @forward(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<2xf32> {
  %all = fastnn.loop 2 iterations {
  ^bb0(%i: tensor<i64>):
    %a = fastnn.neg %x : tensor<256xf32>
    %ra = fastnn.allreduce mean %a : tensor<256xf32>
    %b = fastnn.exp %y : tensor<256xf32>
    %s = fastnn.reduce_sum %x {axes = array<i64: 0>} : tensor<256xf32> -> tensor<f32>
    fastnn.loop_yield %s : tensor<f32>
  } : tensor<2xf32>
  return %all : tensor<2xf32>
}
