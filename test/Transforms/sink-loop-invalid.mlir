// RUN: fastnnc-opt %s -fastnn-sink-loop=iterations=2 -split-input-file -verify-diagnostics

// expected-error @+1 {{loop sinking expects an input named 'labels'}}
func.func @train_step(%x: tensor<2x4xf32> {fastnn.name = "images"}) -> tensor<f32> {
  %c = fastnn.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @+1 {{loop sinking expects the input 'learning_rate' to be 'tensor<f32>', got 'tensor<2xf32>'}}
func.func @train_step(%x: tensor<2x4xf32> {fastnn.name = "images"}, %y: tensor<2xi64> {fastnn.name = "labels"}, %lr: tensor<2xf32> {fastnn.name = "learning_rate"}, %step: tensor<i64> {fastnn.name = "step"}) -> tensor<f32> {
  %c = fastnn.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @+1 {{loop sinking stacks scalar results, got 'tensor<2xf32>'}}
func.func @train_step(%x: tensor<2x4xf32> {fastnn.name = "images"}, %y: tensor<2xi64> {fastnn.name = "labels"}, %lr: tensor<f32> {fastnn.name = "learning_rate"}, %step: tensor<i64> {fastnn.name = "step"}) -> tensor<2xf32> {
  %c = fastnn.constant dense<1.0> : tensor<2xf32>
  return %c : tensor<2xf32>
}
