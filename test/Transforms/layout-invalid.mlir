// RUN: not fastnnc-opt %s -fastnn-layout=target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not fastnnc-opt %s -fastnn-layout=precision=fp8 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not fastnnc-opt %s -fastnn-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=MIXED

// TARGET: error: unknown target 'tpu' (cpu or cuda)
// PRECISION: error: unknown precision 'fp8' (fp32, fp16 or bf16)
// MIXED: error: unknown precision 'fp8' (fp32, fp16 or bf16)
module {
}
