//===- ObjectEmitter.h - LLVM-dialect module to LLVM IR / object -*- C++
//-*-===//

#ifndef FASTNN_TARGET_OBJECTEMITTER_H
#define FASTNN_TARGET_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

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
/// holds the training and the evaluation step), optimises it (O3) for the
/// host CPU and prints the optimised LLVM IR to `os`.
mlir::LogicalResult printHostLLVMIR(llvm::ArrayRef<mlir::ModuleOp> modules,
                                    llvm::raw_ostream &os, std::string &error);

/// Translates, links and optimises as printHostLLVMIR does, then generates
/// host code as relocatable (position independent) objects, one per path in
/// `objectFiles`: the linked module is split into that many parts
/// (llvm::SplitModule), each optimised (O3) and generated on up to
/// `threads` threads (0: one per core). The objects depend on the number of
/// parts only, never on the threads; with one part the whole module is
/// optimised at once and its internal symbols stay internal. With a
/// `dataObjectFile`, the large constant arrays (the embedded initial
/// weights) are written there as they are, outside LLVM's optimisation and
/// code generation, and the code declares them (hidden symbols). With
/// several parts, the functions of at least `fastCodegenInstructions`
/// instructions (0: none) take the last part, generated without code
/// generation optimisations: they are the host glue (the step function
/// calling every kernel), whose register allocation at O3 is superlinear in
/// its size. `timing` gets the time of translation, optimisation and code
/// generation.
mlir::LogicalResult emitHostObjects(llvm::ArrayRef<mlir::ModuleOp> modules,
                                    llvm::ArrayRef<std::string> objectFiles,
                                    llvm::StringRef dataObjectFile,
                                    unsigned threads,
                                    unsigned fastCodegenInstructions,
                                    mlir::TimingScope &timing,
                                    std::string &error);

} // namespace fastnn

#endif // FASTNN_TARGET_OBJECTEMITTER_H
