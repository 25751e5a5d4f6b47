// RUN: fastnnc-opt %s -fastnn-lower-to-runtime -split-input-file -verify-diagnostics

// Element types an op takes but its scalar body does not.

func.func @forward(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'fastnn.pow' op expects a floating-point base}}
  %y = fastnn.pow %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @forward(%x: tensor<4xui8>) -> tensor<4xf32> {
  // expected-error @+1 {{'fastnn.cast' op from unsigned integers is not supported by the code generator}}
  %y = fastnn.cast %x {to = f32} : tensor<4xui8> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

