//===- ObjectEmitter.h - LLVM-dialect module to LLVM IR / object -*- C++
//-*-===//

#ifndef FASTNN_TARGET_OBJECTEMITTER_H
#define FASTNN_TARGET_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace fastnn {

/// The standard conversions that take what fastnn-lower-to-runtime produces
/// (func, linalg on memrefs, arith, math, cf and llvm ops) to the LLVM
/// dialect alone.
void buildLowerToLLVMDialectPipeline(mlir::OpPassManager &pm);

/// Translates LLVM-dialect modules to LLVM IR, links them into one (train.bin
/// holds the training and the evaluation step) and optimises it (O3) for the
/// host CPU. With `objectFile`, writes a relocatable object (position
/// independent) there; otherwise prints the optimised LLVM IR to `os`.
mlir::LogicalResult emitHostCode(llvm::ArrayRef<mlir::ModuleOp> modules,
                                 llvm::raw_ostream *os,
                                 llvm::StringRef objectFile,
                                 std::string &error);

} // namespace fastnn

#endif // FASTNN_TARGET_OBJECTEMITTER_H
