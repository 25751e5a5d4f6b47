// RUN: fastnnc-opt %s -fastnn-plan-fusion=max-loop-reduction=4096 -fastnn-lower-to-runtime -split-input-file -verify-diagnostics

// expected-error @+1 {{no function @forward to lower}}
module {
  func.func @other() {
    return
  }
}

// -----

func.func @forward(%x: tensor<2xui8>) -> tensor<2xui8> {
  // expected-error @+1 {{'fastnn.add' op on unsigned integers is not supported by the code generator}}
  %y = fastnn.add %x, %x : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %y : tensor<2xui8>
}

// -----

func.func @forward(%x: tensor<1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x2xf32> {
  // expected-error @+1 {{'fastnn.softmax' op has a tensor of rank above 6, which the runtime kernels do not take}}
  %y = fastnn.softmax %x {axis = 6 : i64} : tensor<1x1x1x1x1x1x2xf32>
  return %y : tensor<1x1x1x1x1x1x2xf32>
}

// -----

func.func @forward(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error @+1 {{'fastnn.lrn' op size 4 is even; fastnn's LRN kernels take odd sizes only (re-export the model with an odd size)}}
  %y = fastnn.lrn %x {size = 4 : i64} : tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}
