// RUN: fastnnc-opt %s -fastnn-dynamic-loss-scale -split-input-file -verify-diagnostics

fastnn.parameter @scale slot = dense<1.0> : tensor<2xf32>
// expected-error @+1 {{fastnn.loss_scale names @scale, which is not an f32 scalar parameter}}
func.func @train_step() attributes {fastnn.loss_scale = @scale} {
  return
}

// -----

fastnn.parameter @scale slot = dense<1.0> : tensor<f32>
// expected-error @+1 {{has a loss scale but no apply_optimizer}}
func.func @train_step() attributes {fastnn.loss_scale = @scale} {
  %s = fastnn.param @scale : tensor<f32>
  return
}

// -----

fastnn.parameter @scale slot = dense<1.0> : tensor<f32>
fastnn.parameter @w trainable = dense<0.1> : tensor<3xf32>
// expected-error @+1 {{does not read its loss scale @scale}}
func.func @train_step(%g: tensor<3xf32>, %lr: tensor<f32>, %step: tensor<i64>) attributes {fastnn.loss_scale = @scale} {
  %w = fastnn.param @w : tensor<3xf32>
  fastnn.apply_optimizer sgd %w, %g, %lr, %step : (tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>) -> ()
  return
}
