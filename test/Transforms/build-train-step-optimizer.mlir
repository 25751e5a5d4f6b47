// RUN: not fastnnc-opt %s -fastnn-build-train-step="optimizer=sgdx" 2>&1 | FileCheck %s
// CHECK: for the --optimizer option: Cannot find option named 'sgdx'!

// The optimizer option takes the spellings of the dialect's optimizers.
// RUN: fastnnc-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --fastnn-build-train-step
// HELP: --optimizer=<value>
// HELP-DAG: =sgd
// HELP-DAG: =momentum
// HELP-DAG: =rmsprop
// HELP-DAG: =adam
// HELP-DAG: =adagrad
// HELP-DAG: =adadelta
// HELP-DAG: =ftrl
// HELP-DAG: =adamweightdecay
func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
