// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file | FileCheck %s

// A bf16 convolution's descriptor says FNN_BF16 (2) and it absorbs its
// relu like an f32 one; casts and bf16 elementwise ops are loops over the
// i16 bits, computing in f32 (which LLVM vectorises). The bf16 add is
// computed inside the final cast's loop, its sum still rounded to bf16
// before the cast reads it.

// CHECK-DAG: dense<[4, 2, 4, 4, 4, 0, 0, 4, 4, 4, 3, 3, 0, 0, 4, 2, 4, 2, 2, 0, 0, 2, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0]> : tensor<35xi64>
// CHECK-LABEL: func.func @fnn_model_run
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2x4x4x4xf32>) outs(%{{.*}} : memref<2x4x4x4xi16>)
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: llvm.call @fnn_conv2d_forward
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<2x4x2x2xi16>, memref<2x4x2x2xi16>) outs(%{{.*}} : memref<2x4x2x2xf32>)
// CHECK: arith.shli
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.shli
// CHECK: %[[WIDE:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: linalg.yield %[[WIDE]] : f32
// CHECK-NOT: linalg.generic
func.func @forward(%x: tensor<2x4x4x4xf32>, %w: tensor<4x4x3x3xbf16>, %y: tensor<2x4x2x2xbf16>) -> tensor<2x4x2x2xf32> {
  %x16 = fastnn.cast %x {to = bf16} : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xbf16>
  %c = fastnn.conv2d %x16, %w : (tensor<2x4x4x4xbf16>, tensor<4x4x3x3xbf16>) -> tensor<2x4x2x2xbf16>
  %r = fastnn.relu %c : tensor<2x4x2x2xbf16>
  %s = fastnn.add %r, %y : (tensor<2x4x2x2xbf16>, tensor<2x4x2x2xbf16>) -> tensor<2x4x2x2xbf16>
  %o = fastnn.cast %s {to = f32} : tensor<2x4x2x2xbf16> -> tensor<2x4x2x2xf32>
  return %o : tensor<2x4x2x2xf32>
}

// -----

// Dynamic loss scaling: the finite check is an and-reduction of x - x == 0
// over each gradient, the next scale a scalar loop, and a conditional
// update calls fnn_optimizer_apply_if with the flag's address.

// CHECK-LABEL: func.func @fnn_model_run
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: arith.subf
// CHECK: arith.cmpf oeq
// CHECK: arith.andi
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: linalg.generic
// CHECK: arith.cmpf oge
// CHECK: arith.maximumf
// CHECK: llvm.call @fnn_optimizer_apply_if(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
fastnn.parameter @w trainable = dense<0.1> : tensor<3x2xf32>
fastnn.parameter @scale slot = dense<32768.0> : tensor<f32>
fastnn.parameter @good slot = dense<0.0> : tensor<f32>
func.func @forward(%g: tensor<3x2xf32>, %h: tensor<2xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> tensor<f32> {
  %w = fastnn.param @w : tensor<3x2xf32>
  %s = fastnn.param @scale : tensor<f32>
  %n = fastnn.param @good : tensor<f32>
  %finite = fastnn.all_finite %g, %h : tensor<3x2xf32>, tensor<2xf32> -> tensor<i1>
  %s2, %n2 = fastnn.update_loss_scale %s, %n, %finite {growth_interval = 2000 : i64, factor = 2.0 : f64} : tensor<f32>, tensor<i1>
  fastnn.update_state %s2 into %s : tensor<f32>
  fastnn.update_state %n2 into %n : tensor<f32>
  fastnn.apply_optimizer sgd %w, %g, %lr, %step if %finite : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>, tensor<i1>) -> ()
  return %s2 : tensor<f32>
}
