//===- LoopNests.h - what the loop-nest outliners share ---------*- C++ -*-===//
//
// The CPU (fastnn-outline-loop-nests) and the CUDA
// (fastnn-outline-gpu-kernels) backends both move each outermost loop nest
// out of the step into a function of its own: a host loop body, a GPU
// kernel. They read the nest's bounds and build the function's inputs the
// same way.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_LOWERING_CONVERSION_LOOPNESTS_H
#define FASTNN_LOWERING_CONVERSION_LOOPNESTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace fastnn {

struct Dimension {
  int64_t lower, step, trips;
};

/// The constant bounds of `loop`'s dimensions, or nothing when one is not.
std::optional<llvm::SmallVector<Dimension>>
constantDimensions(mlir::scf::ParallelOp loop);

/// The scf.parallel nests of `function` that no other one encloses, in
/// program order.
llvm::SmallVector<mlir::scf::ParallelOp>
outermostNests(mlir::func::FuncOp function);

/// `<base><counter>`, with the counter advanced past the names `symbols`
/// already holds.
std::string uniqueName(mlir::SymbolTable &symbols, llvm::StringRef base,
                       unsigned &counter);

/// The induction values of `dims` at the point `linear` of their
/// linearised space, the last dimension varying fastest.
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::Value linear,
                                           llvm::ArrayRef<Dimension> dims);

/// The number of operations `block` executes, loops counted with their
/// static trip counts (a loop with a dynamic one counts once).
int64_t estimateWork(mlir::Block &block);

/// The values a nest reads from above, as an outlined function sees them:
/// a value whose producer is free of side effects (constants, the arena's
/// memref and its views) is recomputed at the start of the function, so
/// that the function sees static offsets of one base pointer; any other
/// becomes a new argument of the function's entry block.
///
/// With `viewOffsetsAsArguments`, the byte offset of every view of the arena
/// becomes an argument too (the view itself is still recomputed): nests that
/// differ only in where their buffers lie become the same function.
class CapturedValues {
public:
  explicit CapturedValues(mlir::Block *entry,
                          bool viewOffsetsAsArguments = false);

  /// Maps every value `region` uses from above into the function.
  void captureUsedAbove(mlir::Region &region);
  /// `value` inside the function.
  mlir::Value materialize(mlir::Value value);

  /// Maps the nest's values to the function's, for cloning its body.
  mlir::IRMapping &mapping() { return valueMapping; }
  /// The values that became arguments, in the order of the arguments.
  llvm::ArrayRef<mlir::Value> arguments() const { return captured; }

private:
  /// Appends `value` to the captured values as a new entry block argument.
  mlir::BlockArgument addArgument(mlir::Value value);

  mlir::Block *entry;
  bool viewOffsetsAsArguments;
  mlir::OpBuilder prologue;
  mlir::IRMapping valueMapping;
  llvm::SmallVector<mlir::Value> captured;
};

} // namespace fastnn

#endif // FASTNN_LOWERING_CONVERSION_LOOPNESTS_H
