// RUN: fastnnc-opt %s -split-input-file -verify-diagnostics

func.func @no_operands() -> tensor<i1> {
  // expected-error @+1 {{expects at least one operand}}
  %f = "fastnn.all_finite"() : () -> tensor<i1>
  return %f : tensor<i1>
}

// -----

func.func @vector_flag(%g: tensor<3xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{expects a scalar result}}
  %f = fastnn.all_finite %g : tensor<3xf32> -> tensor<2xi1>
  return %f : tensor<2xi1>
}

// -----

func.func @shrinking_factor(%s: tensor<f32>, %f: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{expects a factor above 1}}
  %s2, %n2 = fastnn.update_loss_scale %s, %s, %f {growth_interval = 10 : i64, factor = 0.5 : f64} : tensor<f32>, tensor<i1>
  return %s2 : tensor<f32>
}

// -----

func.func @no_interval(%s: tensor<f32>, %f: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{attribute 'growth_interval' failed to satisfy constraint}}
  %s2, %n2 = fastnn.update_loss_scale %s, %s, %f {growth_interval = 0 : i64, factor = 2.0 : f64} : tensor<f32>, tensor<i1>
  return %s2 : tensor<f32>
}

// -----

fastnn.parameter @w trainable = dense<0.1> : tensor<3xf32>
func.func @vector_condition(%g: tensor<3xf32>, %lr: tensor<f32>, %step: tensor<i64>, %c: tensor<3xi1>) {
  %w = fastnn.param @w : tensor<3xf32>
  // expected-error @+1 {{expects a scalar condition}}
  fastnn.apply_optimizer sgd %w, %g, %lr, %step if %c : (tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>, tensor<3xi1>) -> ()
  return
}

// -----

// A bf16 gradient updates an f32 parameter; an f16 one does not (it reaches
// the update unscaled, in f32).
fastnn.parameter @w trainable = dense<0.1> : tensor<3xf32>
func.func @half_gradient(%g: tensor<3xf16>, %lr: tensor<f32>, %step: tensor<i64>) {
  %w = fastnn.param @w : tensor<3xf32>
  // expected-error @+1 {{expects a gradient of the parameter's type, or bf16 for an f32 parameter}}
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<3xf32>, tensor<3xf16>, tensor<f32>, tensor<i64>) -> ()
  return
}

// -----

fastnn.parameter @w trainable = dense<0.1> : tensor<3xf32>
func.func @gradient_shape(%g: tensor<4xbf16>, %lr: tensor<f32>, %step: tensor<i64>) {
  %w = fastnn.param @w : tensor<3xf32>
  // expected-error @+1 {{expects a gradient of the parameter's type, or bf16 for an f32 parameter}}
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<3xf32>, tensor<4xbf16>, tensor<f32>, tensor<i64>) -> ()
  return
}
