// RUN: fastnnc-opt %s -fastnn-verify-cuda-lowered -split-input-file -verify-diagnostics

// Accepted: the LLVM dialect, launches through the ABI.
llvm.func @fnn_gpu_launch(!llvm.ptr, i64, i64, !llvm.ptr)
llvm.mlir.global internal constant @fnn_model_gpu_image("FATBIN")

// -----

// The host loop bodies of the CPU runtime.
// expected-error @+1 {{declares @fnn_parallel_for, which the CUDA runtime does not implement}}
llvm.func @fnn_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)

// -----

// A kernel module that was not embedded.
module attributes {gpu.container_module} {
  // expected-error @+1 {{is left after the CUDA lowering}}
  gpu.binary @fastnn_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "FATBIN">]
}

// -----

// expected-error @+1 {{which the runtime ABI (fastnn/runtime/abi.h) does not declare}}
llvm.func @fnn_gpu_launch_async(!llvm.ptr)
