// RUN: fastnnc-opt %s -fastnn-outline-loop-nests -split-input-file | FileCheck %s

// A 3-D nest: the outer two dimensions are linearised into the range the
// function runs (count 2 x 3), the innermost stays a loop. The arena's
// memref and its view are recomputed inside, so only the arena pointer is
// passed. Work counts the body's three ops and the terminator per
// iteration: 4 x 48.

// CHECK-LABEL: func.func @fnn_model_run(
// CHECK-SAME: %[[ARENA:.*]]: !llvm.ptr)
// CHECK-NOT: scf.parallel
// CHECK: memref.view
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.constant 6 : index
// CHECK-NEXT: call @fnn_model_run_loop0(%[[ZERO]], %[[COUNT]], %[[ARENA]]) : (index, index, !llvm.ptr) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @fnn_model_run_loop0(%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[PTR:.*]]: !llvm.ptr)
// CHECK-SAME: attributes {fastnn.loop_count = 6 : i64, fastnn.loop_work = 192 : i64}
// CHECK: %[[MEM:.*]] = builtin.unrealized_conversion_cast %[[PTR]] : !llvm.ptr to memref<256xi8>
// CHECK: %[[VIEW:.*]] = memref.view %[[MEM]]
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]]
// CHECK-DAG: %[[J:.*]] = arith.remui %[[I]], %{{.*}} : index
// CHECK-DAG: arith.divui %[[I]], %{{.*}} : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}}
// CHECK: memref.load %[[VIEW]][%{{.*}}, %{{.*}}, %[[K]]]
// CHECK: math.exp
// CHECK: memref.store
func.func @fnn_model_run(%arena: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<256xi8>
  %m = memref.view %a[%c64][] : memref<256xi8> to memref<2x3x8xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c8) step (%c1, %c1, %c1) {
    %x = memref.load %m[%i, %j, %k] : memref<2x3x8xf32>
    %y = math.exp %x : f32
    memref.store %y, %m[%i, %j, %k] : memref<2x3x8xf32>
    scf.reduce
  }
  return
}

// -----

// A 1-D nest with a non-zero lower bound and step 2 runs its iterations
// numbered from 0 (iv = 4 + 2 * i); a value from a side-effecting op (the
// load of a sunk loop's index) is passed as an argument: work 2 x 6. The
// inner loop of a 2-D nest multiplies its work: (1 + 3 x 4 + 1) x 4.

// CHECK-LABEL: func.func @sunk(
// CHECK: %[[N:.*]] = memref.load
// CHECK: call @sunk_loop0(%{{.*}}, %{{.*}}, %[[N]], %{{.*}}) : (index, index, f32, memref<16xf32>) -> ()
// CHECK: call @sunk_loop1(
// CHECK: func.func private @sunk_loop0(%[[B:.*]]: index, %[[E:.*]]: index, %[[S:.*]]: f32, %[[M:.*]]: memref<16xf32>)
// CHECK-SAME: fastnn.loop_count = 6 : i64, fastnn.loop_work = 12 : i64
// CHECK: scf.for %[[I:.*]] = %[[B]] to %[[E]]
// CHECK: %[[SCALED:.*]] = arith.muli %[[I]], %[[C2:.*]] : index
// CHECK: %[[IV:.*]] = arith.addi %{{.*}}, %[[SCALED]] : index
// CHECK: memref.store %[[S]], %[[M]][%[[IV]]]
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: func.func private @sunk_loop1(
// CHECK-SAME: fastnn.loop_count = 4 : i64, fastnn.loop_work = 56 : i64
func.func @sunk(%m: memref<16xf32>, %n: memref<4x3xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %v = memref.load %s[] : memref<f32>
  scf.parallel (%i) = (%c4) to (%c16) step (%c2) {
    memref.store %v, %m[%i] : memref<16xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c3 step %c1 {
      %x = memref.load %n[%i, %j] : memref<4x3xf32>
      %y = arith.addf %x, %v : f32
      memref.store %y, %n[%i, %j] : memref<4x3xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Nests with dynamic bounds or reductions stay where they are.

// CHECK-LABEL: func.func @kept(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: func.func private
func.func @kept(%m: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %m[%i] : memref<?xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %m[%i] : memref<?xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %sum : f32
}

// -----

// Two nests that differ only in where their buffers lie share one function,
// which takes the views' byte offsets as arguments; a nest that differs in
// its body (log, not exp) keeps its offset as a constant.

// CHECK-LABEL: func.func @repeated(
// CHECK-SAME: %[[ARENA:.*]]: !llvm.ptr)
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: call @repeated_loop0(%{{.*}}, %{{.*}}, %[[ARENA]], %[[C64]]) : (index, index, !llvm.ptr, index) -> ()
// CHECK: call @repeated_loop0(%{{.*}}, %{{.*}}, %[[ARENA]], %[[C128]]) : (index, index, !llvm.ptr, index) -> ()
// CHECK: call @repeated_loop2(%{{.*}}, %{{.*}}, %[[ARENA]]) : (index, index, !llvm.ptr) -> ()
// CHECK-NOT: @repeated_loop1
// CHECK: func.func private @repeated_loop0(%{{.*}}: index, %{{.*}}: index, %[[PTR:.*]]: !llvm.ptr, %[[OFFSET:.*]]: index)
// CHECK: %[[MEM:.*]] = builtin.unrealized_conversion_cast %[[PTR]]
// CHECK: memref.view %[[MEM]][%[[OFFSET]]][]
// CHECK: math.exp
// CHECK-NOT: @repeated_loop1
// CHECK: func.func private @repeated_loop2(%{{.*}}: index, %{{.*}}: index, %{{.*}}: !llvm.ptr)
// CHECK: %[[OFFSET2:.*]] = arith.constant 192 : index
// CHECK: memref.view %{{.*}}[%[[OFFSET2]]][]
// CHECK: math.log
func.func @repeated(%arena: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c192 = arith.constant 192 : index
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<256xi8>
  %m = memref.view %a[%c64][] : memref<256xi8> to memref<8xf32>
  %n = memref.view %a[%c128][] : memref<256xi8> to memref<8xf32>
  %p = memref.view %a[%c192][] : memref<256xi8> to memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %m[%i] : memref<8xf32>
    %y = math.exp %x : f32
    memref.store %y, %m[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %n[%i] : memref<8xf32>
    %y = math.exp %x : f32
    memref.store %y, %n[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %p[%i] : memref<8xf32>
    %y = math.log %x : f32
    memref.store %y, %p[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// Serial nests (sums into a scalar, which have no parallel dimension) move
// into functions too, called directly: two that differ only in their
// buffers' offsets share one. A loop that calls something (a sunk step's
// loop) stays, and the nests inside it move out.

// CHECK-LABEL: func.func @serial(
// CHECK-SAME: %[[ARENA:.*]]: !llvm.ptr)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NOT: scf.for
// CHECK: call @serial_loop0(%[[ARENA]], %[[C64]], %[[C0]]) : (!llvm.ptr, index, index) -> ()
// CHECK: call @serial_loop0(%[[ARENA]], %[[C128:.*]], %[[C32]]) : (!llvm.ptr, index, index) -> ()
// CHECK: scf.for
// CHECK-NEXT: call @fnn_trace_end()
// CHECK-NEXT: call @serial_loop2(%[[ARENA]])
// CHECK: func.func private @serial_loop0(%[[PTR:.*]]: !llvm.ptr, %[[IN:.*]]: index, %[[OUT:.*]]: index)
// CHECK-SAME: attributes {fastnn.serial_nest}
// CHECK: memref.view %{{.*}}[%[[IN]]][]
// CHECK: memref.view %{{.*}}[%[[OUT]]][]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-NOT: @serial_loop1
// CHECK: func.func private @serial_loop2(%{{.*}}: !llvm.ptr)
// CHECK-SAME: attributes {fastnn.serial_nest}
// CHECK: arith.constant 192 : index
// CHECK: arith.mulf
func.func private @fnn_trace_end()
func.func @serial(%arena: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c192 = arith.constant 192 : index
  %a = builtin.unrealized_conversion_cast %arena : !llvm.ptr to memref<256xi8>
  %x = memref.view %a[%c64][] : memref<256xi8> to memref<4x4xf32>
  %sx = memref.view %a[%c0][] : memref<256xi8> to memref<f32>
  %y = memref.view %a[%c128][] : memref<256xi8> to memref<4x4xf32>
  %sy = memref.view %a[%c32][] : memref<256xi8> to memref<f32>
  %z = memref.view %a[%c192][] : memref<256xi8> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      %s = memref.load %sx[] : memref<f32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %sx[] : memref<f32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %y[%i, %j] : memref<4x4xf32>
      %s = memref.load %sy[] : memref<f32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %sy[] : memref<f32>
    }
  }
  scf.for %step = %c0 to %c4 step %c1 {
    func.call @fnn_trace_end() : () -> ()
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %z[%i] : memref<4xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %z[%i] : memref<4xf32>
    }
  }
  return
}
