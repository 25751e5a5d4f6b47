// RUN: fastnnc-opt %s -fastnn-emulate-gpu-kernels -split-input-file -verify-diagnostics | FileCheck %s

// A launch of two blocks of 256 threads becomes a host scf.parallel over
// (blocks, threads) running the kernel's body: the ids are the loop's
// induction variables, the kernel's argument the launch's operand, and the
// gpu.module is gone.

// CHECK-LABEL: module {
// CHECK-NOT: gpu.
// CHECK: func.func @fnn_model_run(%[[ARENA:[^:]*]]: !llvm.ptr)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: scf.parallel (%[[B:[^,]*]], %{{[^,]*}}, %{{[^,]*}}, %[[T:[^,]*]], %{{[^,]*}}, %{{[^)]*}}) = (%[[C0]], %[[C0]], %[[C0]], %[[C0]], %[[C0]], %[[C0]]) to (%[[C2]], %[[C1]], %[[C1]], %[[C256]], %[[C1]], %[[C1]])
// CHECK: %[[MEM:.*]] = builtin.unrealized_conversion_cast %[[ARENA]] : !llvm.ptr to memref<4096xi8>
// CHECK: %[[BASE:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[INSIDE]] {
// CHECK: math.exp
// CHECK: memref.store
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  func.func @fnn_model_run(%arena: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @fastnn_kernels::@k blocks in (%c2, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%arena : !llvm.ptr)
    return
  }
  gpu.module @fastnn_kernels {
    gpu.func @k(%ptr: !llvm.ptr) kernel {
      %a = builtin.unrealized_conversion_cast %ptr : !llvm.ptr to memref<4096xi8>
      %c0 = arith.constant 0 : index
      %c80 = arith.constant 80 : index
      %c256 = arith.constant 256 : index
      %c320 = arith.constant 320 : index
      %c1280 = arith.constant 1280 : index
      %in = memref.view %a[%c0][] : memref<4096xi8> to memref<4x80xf32>
      %out = memref.view %a[%c1280][] : memref<4096xi8> to memref<4x80xf32>
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %base = arith.muli %b, %c256 : index
      %id = arith.addi %base, %t : index
      %inside = arith.cmpi ult, %id, %c320 : index
      scf.if %inside {
        %j = arith.remui %id, %c80 : index
        %i = arith.divui %id, %c80 : index
        %x = memref.load %in[%i, %j] : memref<4x80xf32>
        %y = math.exp %x : f32
        memref.store %y, %out[%i, %j] : memref<4x80xf32>
      }
      gpu.return
    }
  }
}

// -----

// A kernel using a GPU operation the host cannot run is an error at it.

module attributes {gpu.container_module} {
  func.func @fnn_model_run(%arena: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @fastnn_kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%arena : !llvm.ptr)
    return
  }
  gpu.module @fastnn_kernels {
    gpu.func @k(%ptr: !llvm.ptr) kernel {
      // expected-error @+1 {{is a GPU operation the host emulation lacks}}
      gpu.barrier
      gpu.return
    }
  }
}
