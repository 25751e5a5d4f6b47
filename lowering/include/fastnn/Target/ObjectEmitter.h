//===- ObjectEmitter.h - LLVM-dialect module to LLVM IR / object -*- C++
//-*-===//

#ifndef FASTNN_TARGET_OBJECTEMITTER_H
#define FASTNN_TARGET_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace fastnn {

/// The CPU's part after fastnn-lower-to-runtime: linalg to loop nests run
/// through fnn_parallel_for, and everything (func, memrefs, arith, math, cf
/// and llvm ops) to the LLVM dialect alone.
void buildLowerToLLVMDialectPipeline(mlir::OpPassManager &pm);

/// The standard conversions of host code without linalg (scf, memref,
/// arith, math, index, func and cf ops) to the LLVM dialect, which both
/// targets end with.
void buildHostToLLVMDialectPipeline(mlir::OpPassManager &pm);

/// Adds to an LLVM-dialect module the constant globals `symbol` (an i8
/// array of `bytes`) and `symbol`_bytes (its length as an i64), both
/// external, for data the runtime reads as it is (e.g. fnn_model_onnx).
void embedBytes(mlir::ModuleOp module, llvm::StringRef symbol,
                llvm::StringRef bytes);

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
