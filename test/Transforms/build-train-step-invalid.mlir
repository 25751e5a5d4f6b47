// RUN: fastnnc-opt %s -fastnn-build-train-step -split-input-file -verify-diagnostics

// expected-error @+1 {{no function @forward to train}}
module {
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{the loss does not depend on any trainable parameter}}
  return %x : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{training expects a model with one input (the images), got 2}}
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

fastnn.parameter @w trainable = dense<1.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = fastnn.param @w : tensor<3xf32>
  // expected-error @+1 {{'fastnn.max' op has no gradient: elementwise max is not differentiated yet}}
  %m = fastnn.max %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %m : tensor<2x3xf32>
}
