// RUN: fastnnc-opt %s -fastnn-verify-cpu-lowered -split-input-file -verify-diagnostics | FileCheck %s

// The LLVM dialect, calling what abi.h declares and the C library: accepted
// as it is.

// CHECK-LABEL: llvm.func @fnn_model_run
// CHECK: llvm.call @fnn_trace_begin
// CHECK: llvm.call @expf
llvm.func @fnn_trace_begin(!llvm.ptr)
llvm.func @expf(f32) -> f32
llvm.func @fnn_model_run(%name: !llvm.ptr, %x: f32) -> f32 {
  llvm.call @fnn_trace_begin(%name) : (!llvm.ptr) -> ()
  %e = llvm.call @expf(%x) : (f32) -> f32
  llvm.return %e : f32
}

// -----

// expected-error @+1 {{declares @fnn_conv3d_forward, which the runtime ABI (fastnn/runtime/abi.h) does not declare}}
llvm.func @fnn_conv3d_forward(!llvm.ptr)

// -----

// expected-error @+1 {{is left after the CPU lowering: the object emitter translates the LLVM dialect only}}
func.func @fnn_model_run() {
  return
}
