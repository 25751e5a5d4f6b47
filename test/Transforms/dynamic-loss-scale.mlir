// RUN: fastnnc-opt %s -fastnn-dynamic-loss-scale=growth-interval=100 -split-input-file | FileCheck %s

// The check of every gradient the optimizer receives, the next scale, the
// state updates and the conditional updates sit right before the first
// apply_optimizer; the step returns the next scale and whether it skipped.

// CHECK: fastnn.parameter @loss_scale slot = dense<3.276800e+04> : tensor<f32>
// CHECK-NEXT: fastnn.parameter @loss_scale.good_steps slot = dense<0.000000e+00> : tensor<f32>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: -> (tensor<f32> {fastnn.name = "loss"}, tensor<f32> {fastnn.name = "loss_scale"}, tensor<f32> {fastnn.name = "skipped"})
// CHECK: %[[N:.*]] = fastnn.param @loss_scale.good_steps : tensor<f32>
// CHECK: %[[S:.*]] = fastnn.param @loss_scale : tensor<f32>
// CHECK: %[[DW:.*]] = fastnn.mul
// CHECK: %[[DB:.*]] = fastnn.mul
// CHECK-NEXT: %[[FINITE:.*]] = fastnn.all_finite %[[DW]], %[[DB]] : tensor<3x2xf32>, tensor<2xf32> -> tensor<i1>
// CHECK-NEXT: %[[NEXT:.*]], %[[COUNT:.*]] = fastnn.update_loss_scale %[[S]], %[[N]], %[[FINITE]] {factor = 2.000000e+00 : f64, growth_interval = 100 : i64} : tensor<f32>, tensor<i1>
// CHECK-NEXT: fastnn.update_state %[[NEXT]] into %[[S]] : tensor<f32>
// CHECK-NEXT: fastnn.update_state %[[COUNT]] into %[[N]] : tensor<f32>
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[DW]], %{{.*}}, %{{.*}} if %[[FINITE]] :
// CHECK-NEXT: fastnn.apply_optimizer sgd %{{.*}}, %[[DB]], %{{.*}}, %{{.*}} if %[[FINITE]] :
// CHECK-NEXT: %[[ONE:.*]] = fastnn.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[F:.*]] = fastnn.cast %[[FINITE]] {to = f32} : tensor<i1> -> tensor<f32>
// CHECK-NEXT: %[[SKIPPED:.*]] = fastnn.sub %[[ONE]], %[[F]]
// CHECK-NEXT: return %{{.*}}, %[[NEXT]], %[[SKIPPED]]
fastnn.parameter @w trainable = dense<0.1> : tensor<3x2xf32>
fastnn.parameter @b trainable = dense<0.0> : tensor<2xf32>
fastnn.parameter @loss_scale slot = dense<32768.0> : tensor<f32>
func.func @train_step(%g: tensor<3x2xf32>, %h: tensor<2xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<f32> {fastnn.name = "loss"}) attributes {fastnn.loss_scale = @loss_scale} {
  %s = fastnn.param @loss_scale : tensor<f32>
  %w = fastnn.param @w : tensor<3x2xf32>
  %b = fastnn.param @b : tensor<2xf32>
  %inv = fastnn.reciprocal %s : tensor<f32>
  %dw = fastnn.mul %g, %inv : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %db = fastnn.mul %h, %inv : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  fastnn.apply_optimizer sgd %w, %dw, %lr, %step : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>) -> ()
  fastnn.apply_optimizer sgd %b, %db, %lr, %step : (tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<i64>) -> ()
  return %s : tensor<f32>
}

// -----

// A function without the attribute is left alone.

// CHECK-LABEL: func.func @static_step(
// CHECK-NOT: fastnn.all_finite
// CHECK: fastnn.apply_optimizer sgd %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
fastnn.parameter @w trainable = dense<0.1> : tensor<3x2xf32>
func.func @static_step(%g: tensor<3x2xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %w = fastnn.param @w : tensor<3x2xf32>
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<i64>) -> ()
  return
}
