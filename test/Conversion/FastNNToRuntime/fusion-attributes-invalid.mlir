// RUN: fastnnc-opt %s -fastnn-lower-to-runtime -split-input-file -verify-diagnostics

fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x1x1xf32>
func.func @forward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x1x1xf32>
  // expected-error @+1 {{has post-op 'gelu', which the runtime kernels lack}}
  %c = fastnn.conv2d %x, %w {fastnn.post_op = "gelu"} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{cannot be fused into its producer}}
  %n = fastnn.neg %x {fastnn.fused_into_producer} : tensor<2x3xf32>
  return %n : tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{is fused into no matmul that takes a bias}}
  %s = fastnn.add %x, %v {fastnn.fused_into_producer} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

func.func @forward(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{is inlined into a consumer but has not one result read once}}
  %e = fastnn.exp %x {fastnn.inline_into_consumer} : tensor<2x3xf32>
  %n = fastnn.neg %e : tensor<2x3xf32>
  return %e, %n : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

fastnn.parameter @w trainable = dense<1.0> : tensor<2x1x3x3xf32>
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = fastnn.param @w : tensor<2x1x3x3xf32>
  // expected-error @+1 {{is chained into no conv2d that alone reads it: a pointwise conv2d into a depthwise one, or that into a pointwise one}}
  %c = fastnn.conv2d %x, %w {fastnn.chained_into_consumer} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}
