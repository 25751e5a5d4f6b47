// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// A relu after conv becomes the conv's post-op, a reshape takes no memory,
// and a vector add after matmul becomes the matmul's bias: two kernels and
// no loop. Their weights are parameters of an inference step: the last
// descriptor words (constant_filter, constant_b) say so.

// CHECK-LABEL: module
// CHECK-DAG: llvm.mlir.global internal constant @fnn_desc_0(dense<[4, 1, 1, 4, 4, 0, 0, 4, 4, 1, 3, 3, 0, 0, 4, 1, 4, 4, 4, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]> : tensor<35xi64>)
// CHECK-DAG: llvm.mlir.global internal constant @fnn_desc_1(dense<[2, 1, 64, 0, 0, 0, 0, 2, 10, 64, 0, 0, 0, 0, 2, 1, 10, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1]> : tensor<27xi64>)
// CHECK-NOT: @fnn_init_
// CHECK: func.func @fnn_model_init(
// CHECK-NOT: llvm.call @fnn_copy_to_device
// CHECK-COUNT-3: linalg.fill
// CHECK: llvm.call @fnn_conv2d_create
// CHECK: llvm.call @fnn_matmul_create
// CHECK: func.func @fnn_model_run(
// CHECK-NOT: linalg.generic
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK-NOT: linalg.generic
// CHECK: llvm.call @fnn_matmul_forward
// CHECK-NEXT: llvm.call @fnn_trace_end()
// CHECK-NEXT: return
// CHECK: func.func @fnn_model_release(
// CHECK-COUNT-2: llvm.call @fnn_kernel_destroy
// CHECK-NOT: fastnn.
fastnn.parameter @w trainable = dense<1.0> : tensor<4x1x3x3xf32>
fastnn.parameter @fcw trainable = dense<1.0> : tensor<10x64xf32>
fastnn.parameter @fcb trainable = dense<0.5> : tensor<10xf32>
func.func @forward(%x: tensor<1x1x4x4xf32> {fastnn.name = "images"}) -> (tensor<1x10xf32> {fastnn.name = "logits"}) {
  %w = fastnn.param @w : tensor<4x1x3x3xf32>
  %fcw = fastnn.param @fcw : tensor<10x64xf32>
  %fcb = fastnn.param @fcb : tensor<10xf32>
  %c = fastnn.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %r = fastnn.relu %c : tensor<1x4x4x4xf32>
  %f = fastnn.reshape %r : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
  %m = fastnn.matmul %f, %fcw {transpose_b} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
  %y = fastnn.add %m, %fcb : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  return %y : tensor<1x10xf32>
}

// -----

// Buffers whose lifetimes do not overlap share memory: exp's result is dead
// once the first mul has read it, so the second mul's result takes its
// bytes. The input and the output stay live for the whole run. (Reading a
// value twice keeps it from being computed inside its user's loop.)

// CHECK-LABEL: module
// CHECK: llvm.mlir.global external constant @fnn_model_arena_bytes(12288 : i64)
// CHECK: llvm.mlir.global external constant @fnn_model_io(dense<[2, 0, 0, 2, 1, 1024, 0, 0, 0, 0, [[IN:[0-9]+]], 0, 1, 1, 0, 2, 1, 1024, 0, 0, 0, 0, [[OUT:[0-9]+]], 1, 1]> : tensor<25xi64>)
// CHECK: llvm.mlir.global external constant @fnn_model_io_names("xy")
func.func @forward(%x: tensor<1x1024xf32> {fastnn.name = "x"}) -> (tensor<1x1024xf32> {fastnn.name = "y"}) {
  %a = fastnn.exp %x : tensor<1x1024xf32>
  %b = fastnn.mul %a, %a : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %c = fastnn.mul %b, %b : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %d = fastnn.sqrt %c : tensor<1x1024xf32>
  return %d : tensor<1x1024xf32>
}

// -----

// Elementwise ops are linalg loops over views of the arena; a size-1
// dimension broadcasts by reading index 0.

// CHECK-LABEL: #map1 = affine_map<(d0, d1) -> (0, d1)>
// CHECK: func.func @fnn_model_run(
// CHECK: %[[ARENA:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<{{[0-9]+}}xi8>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<2x3xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<1x3xf32>
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : memref<2x3xf32>, memref<1x3xf32>) outs(%[[C]] : memref<2x3xf32>)
// CHECK: arith.addf
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %c = fastnn.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// -----

// Data movement: concat copies each input into a subview of the output;
// constant padding fills, then copies the interior; slices and gathers read
// through computed indices.

// CHECK: func.func @fnn_model_run(
// CHECK: memref.subview %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK: linalg.copy
// CHECK: memref.subview %{{.*}}[0, 3] [2, 1] [1, 1]
// CHECK: linalg.copy
// CHECK: linalg.fill
// CHECK: memref.subview %{{.*}}[1, 0] [2, 4] [1, 1]
// CHECK: linalg.copy
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: memref.load
// CHECK: linalg.generic
// CHECK: memref.load
// CHECK: arith.index_cast
// CHECK: memref.load
func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %i: tensor<2xi64>) -> (tensor<4x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %c = fastnn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %p = fastnn.pad %c {pads = array<i64: 1, 0, 1, 0>, value = 2.0 : f64} : tensor<2x4xf32> -> tensor<4x4xf32>
  %s = fastnn.slice %a {offsets = array<i64: 0, 2>, steps = array<i64: 1, -2>} : tensor<2x3xf32> -> tensor<2x2xf32>
  %g = fastnn.gather %a, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %p, %s, %g : tensor<4x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Offsets past what a GEP constant index holds (large models' arenas pass
// 2 GiB) are 64-bit values: the copy of @small's initial value goes behind
// the big buffers.

// CHECK: func.func @fnn_model_init(
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(9600000000 : i64) : i64
// CHECK-NEXT: llvm.getelementptr %{{.*}}[%[[OFFSET]]]
// CHECK-NEXT: llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: llvm.call @fnn_copy_to_device
fastnn.parameter @big0 trainable = dense<1.0> : tensor<600000000xf32>
fastnn.parameter @big1 trainable = dense<2.0> : tensor<600000000xf32>
fastnn.parameter @small trainable = dense<[1.0, 2.0]> : tensor<2xf32>
func.func @forward(%x: tensor<600000000xf32>) -> (tensor<600000000xf32>, tensor<2xf32>) {
  %a = fastnn.param @big0 : tensor<600000000xf32>
  %b = fastnn.param @big1 : tensor<600000000xf32>
  %c = fastnn.param @small : tensor<2xf32>
  %s = fastnn.add %a, %b : (tensor<600000000xf32>, tensor<600000000xf32>) -> tensor<600000000xf32>
  %y = fastnn.add %s, %x : (tensor<600000000xf32>, tensor<600000000xf32>) -> tensor<600000000xf32>
  %z = fastnn.add %c, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y, %z : tensor<600000000xf32>, tensor<2xf32>
}

// -----

// max_pool2d_indices: one loop over the output; each element walks its
// window (unrolled), reads in-bounds positions only and keeps the first
// strictly larger value's flat index (column-major here: w * H + h).

// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<1x2x2x2xi64>)
// CHECK: %[[N:[0-9]+]] = linalg.index 0 : index
// CHECK: %[[C:[0-9]+]] = linalg.index 1 : index
// CHECK: %[[H:[0-9]+]] = arith.select %[[INSIDE:[0-9]+]], %{{[0-9]+}}, %{{[a-z0-9_]+}} : index
// CHECK: %[[W:[0-9]+]] = arith.select %[[INSIDE]], %{{[0-9]+}}, %{{[a-z0-9_]+}} : index
// CHECK: %[[X:[0-9]+]] = memref.load %{{.*}}[%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x4x4xf32>
// CHECK: %[[COLUMN:[0-9]+]] = arith.muli %[[W]], %{{[a-z0-9_]+}} : index
// CHECK: arith.addi %[[COLUMN]], %[[H]] : index
// CHECK: arith.cmpf ogt, %[[X]], %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
// CHECK-COUNT-3: memref.load
// CHECK: linalg.yield %{{.*}} : i64
func.func @forward(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64> {
  %i = fastnn.max_pool2d_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, storage_order = 1 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xi64>
  return %i : tensor<1x2x2x2xi64>
}
