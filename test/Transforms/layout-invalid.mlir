// RUN: not fastnnc-opt %s -fastnn-layout=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fastnnc-opt %s -fastnn-layout=precision=fp8 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fastnnc-opt %s -fastnn-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not fastnnc-opt %s -fastnn-layout=layout=nchwc 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not fastnnc-opt %s -fastnn-layout=input-layout=nhwc 2>&1 | FileCheck %s --check-prefix=INPUT

// TARGET: error: unknown target 'tpu' (cpu or cuda)
// PRECISION: error: unknown precision 'fp8' (fp32, fp16 or bf16)
// LAYOUT: error: unknown layout 'nchwc' (auto, nchw or nhwc)
// INPUT: error: unknown input-layout 'nhwc' (kernels, model or reads)
// MIXED: error: unknown precision 'fp8' (fp32, fp16 or bf16)
module {
}
