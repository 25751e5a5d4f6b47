// RUN: fastnnc-opt %s -fastnn-fuse-allreduce="bucket-bytes=0" -split-input-file | FileCheck %s --check-prefix=UNFUSED
// RUN: fastnnc-opt %s -fastnn-fuse-allreduce="bucket-bytes=1024" -split-input-file | FileCheck %s --check-prefix=KB
// RUN: fastnnc-opt %s -fastnn-fuse-allreduce="bucket-bytes=1536" -split-input-file | FileCheck %s --check-prefix=KB15
// RUN: fastnnc-opt %s -fastnn-fuse-allreduce -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: fastnnc-opt %s -fastnn-fuse-allreduce -split-input-file -mlir-print-debuginfo | FileCheck %s --check-prefix=NAMES

// Five gradients of 256, 512, 1024, 128 and 128 bytes, completed in that
// order by the backward pass. Buckets fill in that order up to the
// threshold; each fused allreduce stands where its last member stood,
// right after that member's gradient is complete.

// UNFUSED-LABEL: func.func @buckets
// UNFUSED-COUNT-5: fastnn.allreduce mean %{{[a-z0-9]+}} : tensor<
// UNFUSED-NEXT: return

// KB-LABEL: func.func @buckets
// KB: %[[B:.*]] = fastnn.exp %arg1
// KB-NEXT: %[[AB:.*]]:2 = fastnn.allreduce mean %[[A:.*]], %[[B]] : tensor<64xf32>, tensor<128xf32>
// KB: %[[C:.*]] = fastnn.exp %arg2
// KB-NEXT: %[[RC:.*]] = fastnn.allreduce mean %[[C]] : tensor<256xf32>
// KB: %[[E:.*]] = fastnn.exp %arg4
// KB-NEXT: %[[DE:.*]]:2 = fastnn.allreduce mean %[[D:.*]], %[[E]] : tensor<32xf32>, tensor<32xf32>
// KB-NEXT: return %[[AB]]#0, %[[AB]]#1, %[[RC]], %[[DE]]#0, %[[DE]]#1

// KB15-LABEL: func.func @buckets
// KB15: fastnn.allreduce mean %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<128xf32>
// KB15: fastnn.allreduce mean %{{.*}}, %{{.*}}, %{{.*}} : tensor<256xf32>, tensor<32xf32>, tensor<32xf32>
// KB15-NEXT: return

// DEFAULT-LABEL: func.func @buckets
// DEFAULT: %[[ALL:.*]]:5 = fastnn.allreduce mean %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<128xf32>, tensor<256xf32>, tensor<32xf32>, tensor<32xf32>
// DEFAULT-NEXT: return %[[ALL]]#0, %[[ALL]]#1, %[[ALL]]#2, %[[ALL]]#3, %[[ALL]]#4

// NAMES-LABEL: func.func @buckets
// NAMES: fastnn.allreduce mean {{.*}} loc(#[[LOC:.*]])
// NAMES: #[[LOC]] = loc("bucket0"(
func.func @buckets(%x0: tensor<64xf32>, %x1: tensor<128xf32>, %x2: tensor<256xf32>, %x3: tensor<32xf32>, %x4: tensor<32xf32>) -> (tensor<64xf32>, tensor<128xf32>, tensor<256xf32>, tensor<32xf32>, tensor<32xf32>) {
  %a = fastnn.exp %x0 : tensor<64xf32>
  %ra = fastnn.allreduce mean %a : tensor<64xf32>
  %b = fastnn.exp %x1 : tensor<128xf32>
  %rb = fastnn.allreduce mean %b : tensor<128xf32>
  %c = fastnn.exp %x2 : tensor<256xf32>
  %rc = fastnn.allreduce mean %c : tensor<256xf32>
  %d = fastnn.exp %x3 : tensor<32xf32>
  %rd = fastnn.allreduce mean %d : tensor<32xf32>
  %e = fastnn.exp %x4 : tensor<32xf32>
  %re = fastnn.allreduce mean %e : tensor<32xf32>
  return %ra, %rb, %rc, %rd, %re : tensor<64xf32>, tensor<128xf32>, tensor<256xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// One collective reduces one buffer of one element type one way: kinds and
// element types do not mix, and each pair of them fills its own bucket, so
// that the f32 means on either side of an f16 one (mixed precision's
// gradients) still share one.

// DEFAULT-LABEL: func.func @kinds_and_types
// DEFAULT-NEXT: fastnn.allreduce mean %arg1 : tensor<4xf16>
// DEFAULT-NEXT: fastnn.allreduce sum %arg2 : tensor<4xf32>
// DEFAULT-NEXT: fastnn.allreduce mean %arg0, %arg3, %arg4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// DEFAULT-NEXT: return
func.func @kinds_and_types(%a: tensor<4xf32>, %b: tensor<4xf16>, %c: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ra = fastnn.allreduce mean %a : tensor<4xf32>
  %rb = fastnn.allreduce mean %b : tensor<4xf16>
  %rc = fastnn.allreduce sum %c : tensor<4xf32>
  %rd = fastnn.allreduce mean %d : tensor<4xf32>
  %re = fastnn.allreduce mean %e : tensor<4xf32>
  return %ra, %rb, %rc, %rd, %re : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A result used before the next allreduce closes the bucket: the fused op
// would stand after that use.

// DEFAULT-LABEL: func.func @used_in_between
// DEFAULT-NEXT: %[[RA:.*]] = fastnn.allreduce mean %arg0 : tensor<4xf32>
// DEFAULT-NEXT: %[[N:.*]] = fastnn.neg %[[RA]]
// DEFAULT-NEXT: fastnn.allreduce mean %[[N]], %arg1 : tensor<4xf32>, tensor<4xf32>
func.func @used_in_between(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %ra = fastnn.allreduce mean %a : tensor<4xf32>
  %n = fastnn.neg %ra : tensor<4xf32>
  %rn = fastnn.allreduce mean %n : tensor<4xf32>
  %rb = fastnn.allreduce mean %b : tensor<4xf32>
  return %rn, %rb : tensor<4xf32>, tensor<4xf32>
}

// -----

// After fastnn-sink-loop the step is the body of a loop: its allreduces are
// fused there.

// DEFAULT-LABEL: func.func @sunk_loop
// DEFAULT: fastnn.loop 2 iterations
// DEFAULT: %[[B:.*]] = fastnn.exp
// DEFAULT-NEXT: fastnn.allreduce mean %{{.*}}, %[[B]] : tensor<4xf32>, tensor<4xf32>
// DEFAULT-NEXT: fastnn.reduce_sum
// DEFAULT-NEXT: fastnn.loop_yield
func.func @sunk_loop(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<2xf32> {
  %all = fastnn.loop 2 iterations {
  ^bb0(%i: tensor<i64>):
    %a = fastnn.neg %x : tensor<4xf32>
    %ra = fastnn.allreduce mean %a : tensor<4xf32>
    %b = fastnn.exp %y : tensor<4xf32>
    %rb = fastnn.allreduce mean %b : tensor<4xf32>
    %s = fastnn.reduce_sum %x {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
    fastnn.loop_yield %s : tensor<f32>
  } : tensor<2xf32>
  return %all : tensor<2xf32>
}
