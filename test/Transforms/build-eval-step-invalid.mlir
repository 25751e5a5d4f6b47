// RUN: fastnnc-opt %s -fastnn-build-eval-step -split-input-file -verify-diagnostics

// expected-error @+1 {{no function @forward to evaluate}}
module {
}

// -----

// expected-error @+1 {{evaluation expects a model with one input (the images), got 2}}
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{evaluation expects the logits (and optionally auxiliary logits) as outputs, got 3 outputs}}
func.func @forward(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  return %x, %x, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{expects floating-point logits, got 'tensor<2x3xi32>'}}
  return %x : tensor<2x3xi32>
}

// -----

func.func @forward(%x: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  // expected-error @+1 {{expects logits of shape [batch, classes], got 'tensor<2x3x2xf32>'}}
  return %x : tensor<2x3x2xf32>
}
