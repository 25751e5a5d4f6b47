// RUN: fastnnc-opt %s | fastnnc-opt | FileCheck %s

// The ops of dynamic loss scaling and a conditional optimizer update round
// trip.

// CHECK-LABEL: func.func @loss_scale_ops(
// CHECK: %[[F:.*]] = fastnn.all_finite %{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<2xbf16> -> tensor<i1>
// CHECK: fastnn.update_loss_scale %{{.*}}, %{{.*}}, %[[F]] {factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : tensor<f32>, tensor<i1>
// CHECK: fastnn.apply_optimizer momentum %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} if %[[F]] : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>, tensor<3x2xf32>, tensor<i1>) -> ()
// CHECK: fastnn.apply_optimizer sgd %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>) -> ()
fastnn.parameter @w trainable = dense<0.1> : tensor<3x2xf32>
fastnn.parameter @w.slot0 slot = dense<0.0> : tensor<3x2xf32>
func.func @loss_scale_ops(%g: tensor<3x2xf32>, %h: tensor<2xbf16>, %s: tensor<f32>, %n: tensor<f32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32>, tensor<f32>) {
  %w = fastnn.param @w : tensor<3x2xf32>
  %m = fastnn.param @w.slot0 : tensor<3x2xf32>
  %finite = fastnn.all_finite %g, %h : tensor<3x2xf32>, tensor<2xbf16> -> tensor<i1>
  %s2, %n2 = fastnn.update_loss_scale %s, %n, %finite {growth_interval = 2000 : i64, factor = 2.0 : f64} : tensor<f32>, tensor<i1>
  fastnn.apply_optimizer momentum %w, %g, %lr, %step, %m if %finite : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>, tensor<3x2xf32>, tensor<i1>) -> ()
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>) -> ()
  return %s2, %n2 : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @half_batch_norm(
// CHECK: fastnn.batch_norm %{{.*}} : (tensor<2x4x3x3xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xbf16>
func.func @half_batch_norm(%x: tensor<2x4x3x3xbf16>, %p: tensor<4xf32>) -> tensor<2x4x3x3xbf16> {
  %y = fastnn.batch_norm %x, %p, %p, %p, %p : (tensor<2x4x3x3xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xbf16>
  return %y : tensor<2x4x3x3xbf16>
}
