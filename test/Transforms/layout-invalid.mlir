// The enum-valued options take only their listed values; the option parser
// rejects any other before the pass runs.
// RUN: not fastnnc-opt %s -fastnn-layout=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fastnnc-opt %s -fastnn-layout=precision=fp8 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fastnnc-opt %s -fastnn-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fastnnc-opt %s -fastnn-layout=layout=nchwc 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not fastnnc-opt %s -fastnn-layout=input-layout=nhwc 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: fastnnc-opt %s -fastnn-layout="target=cuda precision=bf16 layout=nhwc input-layout=reads" -fastnn-mixed-precision=precision=fp16

// TARGET: for the --target option: Cannot find option named 'tpu'!
// PRECISION: for the --precision option: Cannot find option named 'fp8'!
// LAYOUT: for the --layout option: Cannot find option named 'nchwc'!
// INPUT: for the --input-layout option: Cannot find option named 'nhwc'!
module {
}
