// RUN: not fastnnc-opt %s -fastnn-build-train-step="optimizer=sgdx" 2>&1 | FileCheck %s
// CHECK: unknown optimizer 'sgdx' (adadelta, adagrad, adam, ftrl, momentum, sgd, rmsprop, adamweightdecay)
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
