// RUN: fastnnc-opt %s -fastnn-outline-gpu-kernels -split-input-file -verify-diagnostics | FileCheck %s

// An elementwise op over a 4x80 view: one thread per element, 320 threads
// in two blocks of 256 (the last one's surplus guarded), the innermost
// dimension fastest. The arena's memref and the views are recomputed in
// the kernel, so it takes the arena pointer alone.

#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @fnn_model_run(%[[ARENA:[^:]*]]: !llvm.ptr)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0 blocks in (%[[BLOCKS]], %[[ONE:[^,]*]], %[[ONE]]) threads in (%[[THREADS]], %[[ONE]], %[[ONE]]) args(%[[ARENA]] : !llvm.ptr)
// CHECK-NEXT: return
// CHECK: gpu.module @fastnn_kernels
// CHECK: gpu.func @fnn_model_run_kernel0(%[[PTR:.*]]: !llvm.ptr) kernel
// CHECK: %[[MEM:.*]] = builtin.unrealized_conversion_cast %[[PTR]] : !llvm.ptr to memref<4096xi8>
// CHECK-DAG: %[[IN:.*]] = memref.view %[[MEM]][%{{.*}}][] : memref<4096xi8> to memref<4x80xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.view %[[MEM]][%{{.*}}][] : memref<4096xi8> to memref<4x80xf32>
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[BASE:.*]] = arith.muli %[[BID]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[INSIDE]] {
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %{{.*}} : index
// CHECK: %[[X:.*]] = memref.load %[[IN]][%{{.*}}, %{{.*}}] : memref<4x80xf32>
// CHECK: %[[Y:.*]] = math.exp %[[X]] : f32
// CHECK: memref.store %[[Y]], %[[OUT]][%{{.*}}, %{{.*}}] : memref<4x80xf32>
// CHECK: }
// CHECK: gpu.return
func.func @fnn_model_run(%arena: !llvm.ptr) {
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c1280 = arith.constant 1280 : index
  %in = memref.view %a[%c0][] : memref<4096xi8> to memref<4x80xf32>
  %out = memref.view %a[%c1280][] : memref<4096xi8> to memref<4x80xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<4x80xf32>) outs(%out : memref<4x80xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A full reduction (its first dimension is a reduction) runs on one
// thread, inside a one-iteration nest; a small nest gets one block of just
// its size. A value that is not side-effect free (the iteration of a sunk
// loop) is passed as an argument.

#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
// CHECK: {{^// -+$}}
// CHECK: func.func @fnn_model_run(%[[ARENA:[^:]*]]: !llvm.ptr)
// CHECK: scf.for %[[STEP:[^ ]*]] =
// CHECK: gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[ARENA]] : !llvm.ptr)
// CHECK: gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel1 {{.*}} args(%[[ARENA]] : !llvm.ptr, %[[STEP]] : index)
// CHECK: gpu.func @fnn_model_run_kernel0(%{{.*}}: !llvm.ptr) kernel
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: gpu.func @fnn_model_run_kernel1(%{{.*}}: !llvm.ptr, %[[ITERATION:[^:]*]]: index) kernel
// CHECK: arith.index_cast %[[ITERATION]]
func.func @fnn_model_run(%arena: !llvm.ptr) {
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %in = memref.view %a[%c0][] : memref<4096xi8> to memref<16xf32>
  %out = memref.view %a[%c64][] : memref<4096xi8> to memref<f32>
  %steps = memref.view %a[%c64][] : memref<4096xi8> to memref<16xi64>
  scf.for %step = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
        ins(%in : memref<16xf32>) outs(%out : memref<f32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
        outs(%steps : memref<16xi64>) {
    ^bb0(%o: i64):
      %i = arith.index_cast %step : index to i64
      linalg.yield %i : i64
    }
  }
  return
}

// -----

// Memory the host would read outside any nest is an error at the op.

func.func @fnn_model_run(%arena: !llvm.ptr) -> f32 {
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<4096xi8>
  %c0 = arith.constant 0 : index
  %v = memref.view %a[%c0][] : memref<4096xi8> to memref<f32>
  // expected-error @+1 {{would access device memory from the host}}
  %x = memref.load %v[] : memref<f32>
  return %x : f32
}

// -----

// A sunk loop's bookkeeping: storing its iteration and stacking an output
// (a load only the store reads) run as one-thread kernels.

// CHECK: func.func @fnn_model_run(%[[ARENA:[^:]*]]: !llvm.ptr)
// CHECK: scf.for %[[IV:[^ ]*]] =
// CHECK-NOT: memref.
// CHECK: gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0 {{.*}} args(%[[IV]] : index, %[[ARENA]] : !llvm.ptr)
// CHECK-NOT: memref.
// CHECK: gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel1 {{.*}} args(%[[ARENA]] : !llvm.ptr, %[[IV]] : index)
// CHECK: gpu.func @fnn_model_run_kernel0(
// CHECK: arith.index_cast
// CHECK: memref.store
// CHECK: gpu.func @fnn_model_run_kernel1(
// CHECK: memref.load
// CHECK-NEXT: memref.store
func.func @fnn_model_run(%arena: !llvm.ptr) {
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %iteration = memref.view %a[%c0][] : memref<4096xi8> to memref<i64>
  %loss = memref.view %a[%c64][] : memref<4096xi8> to memref<f32>
  %stacked = memref.view %a[%c64][] : memref<4096xi8> to memref<3xf32>
  scf.for %step = %c0 to %c3 step %c1 {
    %i = arith.index_cast %step : index to i64
    memref.store %i, %iteration[] : memref<i64>
    %v = memref.load %loss[] : memref<f32>
    memref.store %v, %stacked[%step] : memref<3xf32>
  }
  return
}
