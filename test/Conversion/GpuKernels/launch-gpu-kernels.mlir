// RUN: fastnnc-opt %s -fastnn-launch-gpu-kernels -split-input-file -verify-diagnostics | FileCheck %s

// The fatbin becomes a constant; init loads it and looks the kernel up
// before anything else, failing (-1) if either returns null; release
// destroys both; the launch passes the kernel's arguments through a stack
// array of pointers to their values (the index as i64).

// CHECK-NOT: gpu.container_module
// CHECK-DAG: llvm.func @fnn_gpu_module_load(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @fnn_gpu_function_create(!llvm.ptr, !llvm.ptr) -> !llvm.ptr
// CHECK-DAG: llvm.func @fnn_gpu_launch(!llvm.ptr, i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal constant @fnn_model_gpu_image("FATBIN") {addr_space = 0 : i32, alignment = 64 : i64}
// CHECK-DAG: llvm.mlir.global internal @fnn_model_gpu_functions() {{.*}} : !llvm.array<2 x ptr>
// CHECK-DAG: llvm.mlir.global internal constant @fnn_model_gpu_name_0("fnn_model_run_kernel0\00")
// CHECK-NOT: gpu.binary

// CHECK-LABEL: func.func @fnn_model_init(
// CHECK-SAME: %[[DEVICE:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i64
// CHECK: %[[IMAGE:.*]] = llvm.mlir.addressof @fnn_model_gpu_image
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK: %[[MODULE:.*]] = llvm.call @fnn_gpu_module_load(%[[DEVICE]], %[[IMAGE]], %[[BYTES]])
// CHECK: %[[NOMODULE:.*]] = llvm.icmp "eq" %[[MODULE]]
// CHECK: cf.cond_br %[[NOMODULE]], ^[[FAIL:.*]], ^[[LOOKUP:[^ ]*]]
// CHECK: ^[[LOOKUP]]:
// CHECK: %[[FUNCTION:.*]] = llvm.call @fnn_gpu_function_create(%[[MODULE]], %{{.*}})
// CHECK: cf.cond_br %{{.*}}, ^[[FAIL]], ^[[REST:[^ ]*]]
// CHECK: ^[[REST]]:
// CHECK: call @fnn_model_init_rest
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[BAD:.*]] = arith.constant -1 : i64
// CHECK-NEXT: return %[[BAD]] : i64

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK-SAME: %[[ARENA:.*]]: !llvm.ptr, %[[STEP:.*]]: index)
// CHECK-DAG: %[[PARAMS:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x ptr>
// CHECK-DAG: %[[P0:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK-DAG: %[[P1:.*]] = llvm.alloca %{{.*}} x i64
// CHECK: llvm.store %[[ARENA]], %[[P0]]
// CHECK: %[[E0:.*]] = llvm.getelementptr %[[PARAMS]][0, 0]
// CHECK: llvm.store %[[P0]], %[[E0]]
// CHECK: %[[STEP64:.*]] = arith.index_cast %[[STEP]] : index to i64
// CHECK: llvm.store %[[STEP64]], %[[P1]]
// CHECK: %[[E1:.*]] = llvm.getelementptr %[[PARAMS]][0, 1]
// CHECK: llvm.store %[[P1]], %[[E1]]
// CHECK: %[[KERNEL:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-DAG: %[[BLOCKS:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-DAG: %[[THREADS:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK: llvm.call @fnn_gpu_launch(%[[KERNEL]], %[[BLOCKS]], %[[THREADS]], %[[PARAMS]])
// CHECK-NOT: gpu.launch_func

// CHECK-LABEL: func.func @fnn_model_release()
// CHECK: llvm.call @fnn_kernel_destroy
// CHECK: llvm.call @fnn_kernel_destroy
// CHECK: return
module attributes {gpu.container_module} {
  gpu.binary @fastnn_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "FATBIN">]
  func.func private @fnn_model_init_rest(!llvm.ptr)
  func.func @fnn_model_init(%device: !llvm.ptr, %arena: !llvm.ptr) -> i64 {
    call @fnn_model_init_rest(%arena) : (!llvm.ptr) -> ()
    %ok = arith.constant 0 : i64
    return %ok : i64
  ^failure:
    %bad = arith.constant -1 : i64
    return %bad : i64
  }
  func.func @fnn_model_run(%arena: !llvm.ptr, %step: index) {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @fastnn_kernels::@fnn_model_run_kernel0
        blocks in (%c3, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%arena : !llvm.ptr, %step : index)
    return
  }
  func.func @fnn_model_release() {
    return
  }
}

// -----

// expected-error @+1 {{needs exactly one gpu.binary @fastnn_kernels}}
module attributes {gpu.container_module} {
  gpu.binary @other [#gpu.object<#nvvm.target<chip = "sm_90">, "FATBIN">]
}
