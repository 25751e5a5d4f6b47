//===- Normalization.cpp - ONNX normalization operators -------------------===//
//
// BatchNormalization (whose mean and variance inputs are statistics), LRN
// and the softmax family.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

LogicalResult importBatchNormalization(NodeImporter &n) {
  SmallVector<Value> operands;
  for (size_t i = 0; i < 5; ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  if (n.intAttr("spatial", 1) != 1)
    return n.error("spatial=0 (per-activation statistics) is not supported");
  (void)n.intAttr("is_test", 0);
  double momentum = n.floatAttr("momentum", 0.9);
  bool trainingMode = n.intAttr("training_mode", 0) != 0;
  auto used = [&](size_t i) {
    return n.node().output_size() > static_cast<int>(i) && n.isUsed(i);
  };
  // A training-mode node whose updated running statistics the graph reads
  // computes them itself: normalise with the batch's statistics and blend
  // them in (ONNX's running = input * momentum + batch * (1 - momentum),
  // with the biased batch variance). With the statistics left dangling, as
  // training exports do, updating them is the trainer's business and the
  // node is an ordinary batch norm (batch statistics in train.bin, running
  // ones in infer.bin).
  if (trainingMode && (used(1) || used(2))) {
    for (size_t i = 3; i < 5; ++i)
      if (failed(n.requireUnusedOutput(i, "saved batch statistics")))
        return failure();
    Type statisticsType = operands[3].getType();
    auto train = BatchNormTrainOp::create(
        n.builder(), n.getLoc(), operands[0].getType(), statisticsType,
        statisticsType, operands[0], operands[1], operands[2],
        n.builder().getF64FloatAttr(n.floatAttr("epsilon", 1e-5)),
        LayoutAttr::get(n.builder().getContext(), Layout::NCHW));
    Type elementType = cast<RankedTensorType>(statisticsType).getElementType();
    auto blend = [&](Value running, Value batch) -> FailureOr<Value> {
      FailureOr<Value> kept = n.create<MulOp>(
          ValueRange{running, n.scalarConstant(elementType, momentum)});
      FailureOr<Value> fresh = n.create<MulOp>(
          ValueRange{batch, n.scalarConstant(elementType, 1 - momentum)});
      if (failed(kept) || failed(fresh))
        return failure();
      return n.create<AddOp>(ValueRange{*kept, *fresh});
    };
    FailureOr<Value> runningMean = blend(operands[3], train.getMean());
    FailureOr<Value> runningVariance = blend(operands[4], train.getVariance());
    if (failed(runningMean) || failed(runningVariance))
      return failure();
    n.setOutput(1, *runningMean);
    n.setOutput(2, *runningVariance);
    return defineResult(n, train.getResult());
  }
  for (size_t i = 1; i < 5; ++i)
    if (failed(n.requireUnusedOutput(i, "batch statistics")))
      return failure();
  return defineResult(
      n,
      n.create<BatchNormOp>(
          operands,
          {namedAttr(n, "epsilon",
                     n.builder().getF64FloatAttr(n.floatAttr("epsilon", 1e-5))),
           namedAttr(n, "momentum", n.builder().getF64FloatAttr(momentum))}));
}

LogicalResult importLRN(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (!n.hasAttr("size"))
    return n.error("expects a size attribute");
  Builder &b = n.builder();
  return defineResult(
      n,
      n.create<LRNOp>(
          *x,
          {namedAttr(n, "size", b.getI64IntegerAttr(n.intAttr("size", 1))),
           namedAttr(n, "alpha", b.getF64FloatAttr(n.floatAttr("alpha", 1e-4))),
           namedAttr(n, "beta", b.getF64FloatAttr(n.floatAttr("beta", 0.75))),
           namedAttr(n, "bias", b.getF64FloatAttr(n.floatAttr("bias", 1.0)))}));
}

template <typename OpT> LogicalResult importSoftmax(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", -1), type->getRank());
  if (failed(axis))
    return failure();
  return defineResult(
      n, n.create<OpT>(
             *n.input(0),
             {namedAttr(n, "axis", n.builder().getI64IntegerAttr(*axis))}));
}

} // namespace

std::vector<OpRecord> normalizationOpRecords() {
  return {
      // Mean and variance are running statistics, not weights.
      {"BatchNormalization", importBatchNormalization, {9, 14, 15}, {}, {3, 4}},
      {"LRN", importLRN, {13}},
      {"LogSoftmax", importSoftmax<LogSoftmaxOp>, {13}},
      {"Softmax", importSoftmax<SoftmaxOp>, {13}},
  };
}

} // namespace fastnn::onnx_import
