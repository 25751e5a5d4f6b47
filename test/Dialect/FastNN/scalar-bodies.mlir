// RUN: fastnnc-opt %s -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// Each elementwise op's ScalarBodyOpInterface implementation, as the body of
// the loop nest the op is lowered to (one op per case, so nothing is
// inlined).

// Binary ops pick the float or the integer arith op by element type.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V1:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V1:.*]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.max %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xi32>) outs(%{{.*}} : memref<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[V1:.*]] = arith.minsi %[[X]], %[[X]] : i32
// CHECK-NEXT: linalg.yield %[[V1]] : i32
func.func @forward(%i: tensor<4xi32>) -> tensor<4xi32> {
  %r = fastnn.min %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xi32>) outs(%{{.*}} : memref<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[V1:.*]] = arith.divsi %[[X]], %[[X]] : i32
// CHECK-NEXT: linalg.yield %[[V1]] : i32
func.func @forward(%i: tensor<4xi32>) -> tensor<4xi32> {
  %r = fastnn.div %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Pow takes floating-point bases only (see scalar-bodies-invalid.mlir).

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V1:.*]] = math.powf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.pow %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V1:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.abs %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[V1:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.log %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Unary ops are math or arith ops, or short sequences of them.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.divf %[[C1]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.reciprocal %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[V2:.*]] = math.exp %[[V1]] : f32
// CHECK-NEXT: %[[V3:.*]] = arith.addf %[[C1]], %[[V2]] : f32
// CHECK-NEXT: %[[V4:.*]] = arith.divf %[[C1]], %[[V3]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.sigmoid %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf oge, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V2:.*]] = arith.mulf %[[X]], %[[C2]] : f32
// CHECK-NEXT: %[[V3:.*]] = arith.select %[[V1]], %[[X]], %[[V2]] : f32
// CHECK-NEXT: linalg.yield %[[V3]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.leaky_relu %x {alpha = 0.5 : f64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.maximumf %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT: %[[V2:.*]] = arith.minimumf %[[V1]], %[[C2]] : f32
// CHECK-NEXT: linalg.yield %[[V2]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf ogt, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[V2:.*]] = arith.cmpf olt, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[V3:.*]] = arith.select %[[V2]], %[[C2]], %[[C1]] : f32
// CHECK-NEXT: %[[C3:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[V4:.*]] = arith.select %[[V1]], %[[C3]], %[[V3]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.sign %x : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Masked gradients select the incoming gradient (the second operand) by the
// forward value (the first).

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf ogt, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:.*]] = arith.select %[[V1]], %[[Y]], %[[C2]] : f32
// CHECK-NEXT: linalg.yield %[[V2]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.relu_backward %x, %y : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf oge, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[V2:.*]] = arith.mulf %[[Y]], %[[C2]] : f32
// CHECK-NEXT: %[[V3:.*]] = arith.select %[[V1]], %[[Y]], %[[V2]] : f32
// CHECK-NEXT: linalg.yield %[[V3]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.leaky_relu_backward %x, %y {alpha = 0.5 : f64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<4xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf ogt, %[[X]], %[[C1]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT: %[[V2:.*]] = arith.cmpf olt, %[[X]], %[[C2]] : f32
// CHECK-NEXT: %[[V3:.*]] = arith.andi %[[V1]], %[[V2]] : i1
// CHECK-NEXT: %[[C3:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V4:.*]] = arith.select %[[V3]], %[[Y]], %[[C3]] : f32
// CHECK-NEXT: linalg.yield %[[V4]] : f32
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = fastnn.clip_backward %x, %y {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Dropout's mask hashes (seed, step, element index): the only body that
// reads the element's position.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>, memref<i64>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[Y:[a-z0-9_]+]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[V1:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:.*]] = arith.muli %[[V1]], %[[C2]] : index
// CHECK-NEXT: %[[V3:.*]] = arith.addi %[[C1]], %[[V2]] : index
// CHECK-NEXT: %[[V4:.*]] = arith.index_cast %[[V3]] : index to i64
// CHECK-NEXT: %[[C3:.*]] = arith.constant -7046029254386353131 : i64
// CHECK-NEXT: %[[V5:.*]] = arith.muli %[[Y]], %[[C3]] : i64
// CHECK-NEXT: %[[V6:.*]] = arith.xori %[[V4]], %[[V5]] : i64
// CHECK-NEXT: %[[C4:.*]] = arith.constant -4903004494402127083 : i64
// CHECK-NEXT: %[[V7:.*]] = arith.xori %[[V6]], %[[C4]] : i64
// CHECK-NEXT: %[[C5:.*]] = arith.constant -7046029254386353131 : i64
// CHECK-NEXT: %[[V8:.*]] = arith.addi %[[V7]], %[[C5]] : i64
// CHECK-NEXT: %[[C6:.*]] = arith.constant 30 : i64
// CHECK-NEXT: %[[V9:.*]] = arith.shrui %[[V8]], %[[C6]] : i64
// CHECK-NEXT: %[[V10:.*]] = arith.xori %[[V8]], %[[V9]] : i64
// CHECK-NEXT: %[[C7:.*]] = arith.constant -4658895280553007687 : i64
// CHECK-NEXT: %[[V11:.*]] = arith.muli %[[V10]], %[[C7]] : i64
// CHECK-NEXT: %[[C8:.*]] = arith.constant 27 : i64
// CHECK-NEXT: %[[V12:.*]] = arith.shrui %[[V11]], %[[C8]] : i64
// CHECK-NEXT: %[[V13:.*]] = arith.xori %[[V11]], %[[V12]] : i64
// CHECK-NEXT: %[[C9:.*]] = arith.constant -7723592293110705685 : i64
// CHECK-NEXT: %[[V14:.*]] = arith.muli %[[V13]], %[[C9]] : i64
// CHECK-NEXT: %[[C10:.*]] = arith.constant 31 : i64
// CHECK-NEXT: %[[V15:.*]] = arith.shrui %[[V14]], %[[C10]] : i64
// CHECK-NEXT: %[[V16:.*]] = arith.xori %[[V14]], %[[V15]] : i64
// CHECK-NEXT: %[[C11:.*]] = arith.constant 40 : i64
// CHECK-NEXT: %[[V17:.*]] = arith.shrui %[[V16]], %[[C11]] : i64
// CHECK-NEXT: %[[V18:.*]] = arith.uitofp %[[V17]] : i64 to f32
// CHECK-NEXT: %[[C12:.*]] = arith.constant 5.96046448E-8 : f32
// CHECK-NEXT: %[[V19:.*]] = arith.mulf %[[V18]], %[[C12]] : f32
// CHECK-NEXT: %[[C13:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[V20:.*]] = arith.cmpf oge, %[[V19]], %[[C13]] : f32
// CHECK-NEXT: %[[C14:.*]] = arith.constant 1.33333337 : f32
// CHECK-NEXT: %[[V21:.*]] = arith.mulf %[[X]], %[[C14]] : f32
// CHECK-NEXT: %[[C15:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V22:.*]] = arith.select %[[V20]], %[[V21]], %[[C15]] : f32
// CHECK-NEXT: linalg.yield %[[V22]] : f32
func.func @forward(%x: tensor<4xf32>, %step: tensor<i64>) -> tensor<4xf32> {
  %r = fastnn.dropout_train %x, %step {ratio = 0.25 : f64, seed = 7 : i64} : tensor<4xf32>, tensor<i64>
  return %r : tensor<4xf32>
}

// -----

// Casts pick the conversion by the two element types; half-precision ends
// are f32 in the body, widened and rounded around it.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xi32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: i32):
// CHECK-NEXT: %[[V1:.*]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT: linalg.yield %[[V1]] : i32
func.func @forward(%x: tensor<4xf32>) -> tensor<4xi32> {
  %r = fastnn.cast %x {to = i32} : tensor<4xf32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<4xi1>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: i1):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V1:.*]] = arith.cmpf une, %[[X]], %[[C1]] : f32
// CHECK-NEXT: linalg.yield %[[V1]] : i1
func.func @forward(%x: tensor<4xf32>) -> tensor<4xi1> {
  %r = fastnn.cast %x {to = i1} : tensor<4xf32> -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xi16>) outs(%{{.*}} : memref<4xf16>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: i16, %{{.*}}: f16):
// CHECK-NEXT: %[[V1:.*]] = arith.extui %[[X]] : i16 to i32
// CHECK-NEXT: %[[C1:.*]] = arith.constant 16 : i32
// CHECK-NEXT: %[[V2:.*]] = arith.shli %[[V1]], %[[C1]] : i32
// CHECK-NEXT: %[[V3:.*]] = arith.bitcast %[[V2]] : i32 to f32
// CHECK-NEXT: %[[V4:.*]] = arith.truncf %[[V3]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V4]] : f16
func.func @forward(%h: tensor<4xbf16>) -> tensor<4xf16> {
  %r = fastnn.cast %h {to = f16} : tensor<4xbf16> -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// A broadcast's body is its operand, read at the broadcast position.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4xf32>) outs(%{{.*}} : memref<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[X]] : f32
func.func @forward(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %r = fastnn.broadcast %x : tensor<4xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
