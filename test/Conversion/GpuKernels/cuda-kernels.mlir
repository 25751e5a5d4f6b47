// RUN: fastnnc-opt %s --pass-pipeline='builtin.module(fastnn-cuda-kernels)' | FileCheck %s

// The kernels' module to NVVM for sm_90, ready for gpu-module-to-binary:
// the target attached, thread and block ids as PTX special registers,
// memref accesses as LLVM loads and stores, math as libdevice calls.

// CHECK: gpu.module @fastnn_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: llvm.func @fnn_model_run_kernel0(%{{.*}}: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel
// CHECK-DAG: nvvm.read.ptx.sreg.ctaid.x
// CHECK-DAG: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.load
// CHECK: llvm.call @__nv_expf
// CHECK: llvm.store
// CHECK-NOT: memref.
// CHECK-NOT: scf.
module attributes {gpu.container_module} {
  gpu.module @fastnn_kernels {
    gpu.func @fnn_model_run_kernel0(%arena: !llvm.ptr) kernel {
      %p = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %a = llvm.insertvalue %arena, %p[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %b = llvm.insertvalue %arena, %a[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %zero = llvm.mlir.constant(0 : i64) : i64
      %c = llvm.insertvalue %zero, %b[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %size = llvm.mlir.constant(4096 : i64) : i64
      %d = llvm.insertvalue %size, %c[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %one = llvm.mlir.constant(1 : i64) : i64
      %e = llvm.insertvalue %one, %d[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
      %m = builtin.unrealized_conversion_cast %e : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4096xi8>
      %c0 = arith.constant 0 : index
      %c2048 = arith.constant 2048 : index
      %in = memref.view %m[%c0][] : memref<4096xi8> to memref<512xf32>
      %out = memref.view %m[%c2048][] : memref<4096xi8> to memref<512xf32>
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %bid, %c256 : index
      %id = arith.addi %base, %tid : index
      %c512 = arith.constant 512 : index
      %inside = arith.cmpi ult, %id, %c512 : index
      scf.if %inside {
        %x = memref.load %in[%id] : memref<512xf32>
        %y = math.exp %x : f32
        memref.store %y, %out[%id] : memref<512xf32>
      }
      gpu.return
    }
  }
}
