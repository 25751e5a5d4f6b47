// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// Reductions of at most 4096 elements per output element are loops: the
// output is filled with the identity, then accumulated in input order (a
// bias gradient's sum over the batch: reduction outside, the vectorisable
// parallel dimension inside); a mean divides by the count afterwards. A
// maximum starts from -inf and a minimum from +inf.

// CHECK-DAG: #map1 = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #map3 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-LABEL: func.func @fnn_model_run(
// CHECK-NOT: fnn_reduce_forward
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%[[SUM:.*]] : memref<1024xf32>)
// CHECK: linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<64x1024xf32>) outs(%[[SUM]] : memref<1024xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[MEAN:.*]] : memref<2x1x1x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}} : memref<2x3x3x8xf32>) outs(%[[MEAN]] : memref<2x1x1x8xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} outs(%[[MEAN]] : memref<2x1x1x8xf32>)
// CHECK: %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[NINE]] : f32
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: arith.maximumf
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: arith.minimumf
// CHECK-NOT: fnn_reduce_forward
// CHECK: return
func.func @forward(%x: tensor<64x1024xf32>, %y: tensor<2x3x3x8xf32>, %z: tensor<4x10xf32>) -> (tensor<1024xf32>, tensor<2x1x1x8xf32>, tensor<4xf32>, tensor<10xf32>) {
  %s = fastnn.reduce_sum %x {axes = array<i64: 0>} : tensor<64x1024xf32> -> tensor<1024xf32>
  %m = fastnn.reduce_mean %y {axes = array<i64: 1, 2>, keepdims} : tensor<2x3x3x8xf32> -> tensor<2x1x1x8xf32>
  %hi = fastnn.reduce_max %z {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4xf32>
  %lo = fastnn.reduce_min %z {axes = array<i64: 0>} : tensor<4x10xf32> -> tensor<10xf32>
  return %s, %m, %hi, %lo : tensor<1024xf32>, tensor<2x1x1x8xf32>, tensor<4xf32>, tensor<10xf32>
}
