//===- StepBuilder.h - IR of the training and evaluation steps --*- C++ -*-===//
//
// fastnn-build-train-step and fastnn-build-eval-step both rewrite the
// imported @forward(images) into a step over (images, labels, ...) that
// returns (loss, top1, top5); the checks on @forward, the loss and metric
// construction and the final signature live here once.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRANSFORMS_STEPBUILDER_H
#define FASTNN_TRANSFORMS_STEPBUILDER_H

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace fastnn::step {

inline mlir::RankedTensorType typeOf(mlir::Value value) {
  return mlir::cast<mlir::RankedTensorType>(value.getType());
}

/// A float32 scalar constant.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, double value);

template <typename OpT>
mlir::Value binary(mlir::OpBuilder &b, mlir::Location loc, mlir::Value l,
                   mlir::Value r) {
  return OpT::create(b, loc, mlir::ValueRange{l, r}).getResult();
}

/// Sum of every element, as a scalar.
mlir::Value sumAll(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// The imported model a step is built from: @forward with one argument (the
/// images) returning the logits and optionally auxiliary logits. `verb` and
/// `noun` word the errors ("train"/"training", "evaluate"/"evaluation").
mlir::FailureOr<mlir::func::FuncOp> lookupForward(mlir::ModuleOp module,
                                                  llvm::StringRef verb,
                                                  llvm::StringRef noun);

/// The classifier's logits as float32 [N, C]: 1x1 spatial dimensions of
/// convolutional heads are dropped, and half-precision logits are widened
/// (loss and metrics are always computed in float32).
mlir::FailureOr<mlir::Value> asLogits(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value value, int64_t batch,
                                      mlir::Operation *where);

/// one_hot(labels) * log_softmax(logits): [N, C] whose row sums are minus
/// each sample's softmax cross-entropy.
mlir::Value labelLogProbabilities(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value logits, mlir::Value labels);

/// Per sample 1.0 if the label is among the k largest logits, else 0.0, for
/// k = 1 and k = 5 (all classes when there are fewer than 5).
struct TopKHits {
  mlir::Value top1, top5;
};
TopKHits topKHits(mlir::OpBuilder &b, mlir::Location loc, mlir::Value logits,
                  mlir::Value labels);

/// Replaces `ret` by a return of `results`, renames `function` to `name` and
/// names its arguments and results (`fastnn.name`, how drivers find them).
void finishStep(mlir::func::FuncOp function, mlir::func::ReturnOp ret,
                llvm::StringRef name, mlir::ValueRange results,
                llvm::ArrayRef<llvm::StringRef> argNames,
                llvm::ArrayRef<llvm::StringRef> resultNames);

} // namespace fastnn::step

#endif // FASTNN_TRANSFORMS_STEPBUILDER_H
