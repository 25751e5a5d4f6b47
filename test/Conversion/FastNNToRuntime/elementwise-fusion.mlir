// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// A chain of elementwise ops, each result read once by the next op of the
// same shape, is one loop nest: exp and neg are computed inside sqrt's loop,
// in its span, and take no memory (the arena holds the input and the
// output only).

// CHECK: llvm.mlir.global internal constant @[[NAME:.*]]("sqrt root\00")
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: llvm.mlir.addressof @[[NAME]]
// CHECK-NEXT: llvm.call @fnn_trace_begin
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2x1024xf32>) outs(%{{.*}} : memref<2x1024xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: %[[S:.*]] = math.sqrt %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: llvm.call @fnn_trace_end()
// CHECK-NEXT: return
// CHECK: llvm.mlir.global external constant @fnn_model_arena_bytes(16384 : i64)
func.func @forward(%x: tensor<2x1024xf32>) -> tensor<2x1024xf32> {
  %a = fastnn.exp %x : tensor<2x1024xf32> loc("a")
  %b = fastnn.neg %a : tensor<2x1024xf32> loc("b")
  %c = fastnn.sqrt %b : tensor<2x1024xf32> loc("root")
  return %c : tensor<2x1024xf32>
}

// -----

// Operands of the inlined ops are read at the same position as the root's:
// the vector is broadcast to both, and a value read by two inlined ops is
// one input of the nest.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {indexing_maps = [#map, #map1, #map], {{.*}} ins(%{{.*}}, %{{.*}} : memref<2x3xf32>, memref<3xf32>) outs(%{{.*}} : memref<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[V:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[V]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.addf %[[P]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK-NOT: linalg.generic
func.func @forward(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<2x3xf32> {
  %p = fastnn.mul %x, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %q = fastnn.add %p, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %q : tensor<2x3xf32>
}

// -----

// Not inlined: a result that its user broadcasts (computing it per output
// element would repeat the work), one read twice, and one whose operand is
// written in between (the state update must not overtake the read).

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<3xf32>) outs(%{{.*}} : memref<3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<2x3xf32>, memref<3xf32>) outs(%{{.*}} : memref<2x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.tanh
// CHECK-NEXT: linalg.yield
// CHECK: linalg.copy
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.negf
// CHECK-NEXT: linalg.yield
fastnn.parameter @w trainable = dense<1.0> : tensor<2x3xf32>
func.func @forward(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = fastnn.param @w : tensor<2x3xf32>
  %e = fastnn.exp %v : tensor<3xf32>
  %s = fastnn.add %x, %e : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m = fastnn.mul %s, %s : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = fastnn.tanh %w : tensor<2x3xf32>
  fastnn.update_state %m into %w : tensor<2x3xf32>
  %n = fastnn.neg %t : tensor<2x3xf32>
  return %m, %n : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A user more than 8 ops later (a forward value read only by the backward)
// does not take its producer in: the producer's operand would stay alive
// until then beside its result.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK-NEXT: linalg.yield
// CHECK-COUNT-9: arith.negf
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = fastnn.exp %x : tensor<4xf32>
  %n0 = fastnn.neg %y : tensor<4xf32>
  %n1 = fastnn.neg %n0 : tensor<4xf32>
  %n2 = fastnn.neg %n1 : tensor<4xf32>
  %n3 = fastnn.neg %n2 : tensor<4xf32>
  %n4 = fastnn.neg %n3 : tensor<4xf32>
  %n5 = fastnn.neg %n4 : tensor<4xf32>
  %n6 = fastnn.neg %n5 : tensor<4xf32>
  %n7 = fastnn.neg %n6 : tensor<4xf32>
  %n8 = fastnn.neg %n7 : tensor<4xf32>
  %s = fastnn.add %e, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s, %n8 : tensor<4xf32>, tensor<4xf32>
}

// -----

// GELU as exported (x * (1 + erf(x / sqrt 2)) * 0.5) is one loop nest whose
// body computes erf with math.erf.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<2x8xf32>, memref<f32>, memref<f32>, memref<f32>) outs(%{{.*}} : memref<2x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[R:[a-z0-9_]+]]: f32, %[[ONE:[a-z0-9_]+]]: f32, %[[HALF:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[E:.*]] = math.erf %[[D]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[A]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[M]], %[[HALF]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK-NOT: linalg.generic
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %root2 = fastnn.constant dense<1.41421354> : tensor<f32>
  %one = fastnn.constant dense<1.0> : tensor<f32>
  %half = fastnn.constant dense<0.5> : tensor<f32>
  %d = fastnn.div %x, %root2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = fastnn.erf %d : tensor<2x8xf32>
  %a = fastnn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = fastnn.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = fastnn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// An inlined transpose is read from its input through the inverse
// permutation: result [o, h, w, i] reads input [o, i, h, w]. One nest, no
// buffer for the transposed f32 copy.

// CHECK-DAG: #[[PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #{{.*}}], {{.*}} ins(%{{.*}} : memref<8x4x3x3xf32>) outs(%{{.*}} : memref<8x3x3x4xi16>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @forward(%w: tensor<8x4x3x3xf32>) -> tensor<8x3x3x4xbf16> {
  %t = fastnn.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
  %c = fastnn.cast %t {to = bf16} : tensor<8x3x3x4xf32> -> tensor<8x3x3x4xbf16>
  return %c : tensor<8x3x3x4xbf16>
}
