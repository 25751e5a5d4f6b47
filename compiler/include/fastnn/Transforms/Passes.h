//===- Passes.h - fastnn compiler passes ------------------------*- C++ -*-===//

#ifndef FASTNN_TRANSFORMS_PASSES_H
#define FASTNN_TRANSFORMS_PASSES_H

#include "fastnn/Dialect/FastNN/IR/FastNNDialect.h"
#include "fastnn/Transforms/OptionEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace fastnn {

#define GEN_PASS_DECL
#include "fastnn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fastnn/Transforms/Passes.h.inc"

} // namespace fastnn

#endif // FASTNN_TRANSFORMS_PASSES_H
