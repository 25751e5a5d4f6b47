//===- ModelSummary.h - a human-readable digest of a module -----*- C++ -*-===//

#ifndef FASTNN_COMPILER_MODELSUMMARY_H
#define FASTNN_COMPILER_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace fastnn {

/// Prints the entry function's inputs and outputs, the parameters by role
/// with their element counts and bytes, and how often each op occurs.
void printModelSummary(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace fastnn

#endif // FASTNN_COMPILER_MODELSUMMARY_H
