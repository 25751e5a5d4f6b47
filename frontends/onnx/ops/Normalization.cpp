//===- Normalization.cpp - ONNX normalization operators -------------------===//
//
// BatchNormalization (whose mean and variance inputs are statistics), the
// layer, group and instance normalizations (decomposed), LRN and the softmax
// family.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <algorithm>
#include <utility>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

struct Normalized;
FailureOr<Normalized> normalize(NodeImporter &n, Value x,
                                ArrayRef<int64_t> axes, double epsilon,
                                Type computeType);
FailureOr<Value> scaleAndShift(NodeImporter &n, Value value, size_t scaleInput,
                               size_t biasInput, ArrayRef<int64_t> shape);

/// A batch norm whose mean and variance are computed by the graph, not
/// running statistics: weight standardization (timm's ScaledStdConv2d, as
/// both PyTorch exporters write F.batch_norm of a weight), from ops with
/// gradients. In training mode the node normalises with x's own statistics
/// over every axis but 1; otherwise with the given ones.
LogicalResult importComputedStatistics(NodeImporter &n,
                                       ArrayRef<Value> operands,
                                       bool trainingMode, double epsilon);

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
  bool blendsStatistics = trainingMode && (used(1) || used(2));
  if (!blendsStatistics && (!operands[3].getDefiningOp<ParamOp>() ||
                            !operands[4].getDefiningOp<ParamOp>())) {
    for (size_t i = 3; i < 5; ++i)
      if (failed(n.requireUnusedOutput(i, "saved batch statistics")))
        return failure();
    return importComputedStatistics(n, operands, trainingMode,
                                    n.floatAttr("epsilon", 1e-5));
  }
  if (blendsStatistics) {
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

/// centered / sqrt(variance + epsilon), as centered * invStdDev, in `type`.
struct Scaled {
  Value normalized, invStdDev;
};

FailureOr<Scaled> divideByStdDev(NodeImporter &n, Value centered,
                                 Value variance, double epsilon, Type type) {
  FailureOr<Value> shifted =
      n.create<AddOp>(ValueRange{variance, n.scalarConstant(type, epsilon)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> stdDev = n.create<SqrtOp>(*shifted);
  if (failed(stdDev))
    return failure();
  FailureOr<Value> invStdDev = n.create<ReciprocalOp>(*stdDev);
  if (failed(invStdDev))
    return failure();
  FailureOr<Value> normalized =
      n.create<MulOp>(ValueRange{centered, *invStdDev});
  if (failed(normalized))
    return failure();
  return Scaled{*normalized, *invStdDev};
}

/// x normalised over `axes` in `computeType` (the statistics' type),
/// from ops that have gradients: mean = reduce_mean(x), centered = x - mean,
/// invStdDev = 1 / sqrt(reduce_mean(centered^2) + epsilon). The variance
/// is taken of the centered values (two passes), which loses no precision
/// when the mean is large against the spread; normalized is cast back to
/// x's type.
struct Normalized {
  Value normalized, mean, invStdDev;
};

FailureOr<Normalized> normalize(NodeImporter &n, Value x,
                                ArrayRef<int64_t> axes, double epsilon,
                                Type computeType) {
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  auto convert = [&](Value value, Type to) -> FailureOr<Value> {
    if (cast<RankedTensorType>(value.getType()).getElementType() == to)
      return value;
    return n.create<CastOp>(value, {namedAttr(n, "to", TypeAttr::get(to))});
  };
  SmallVector<NamedAttribute> reduceAttrs = {
      namedAttr(n, "axes", i64Array(n, axes)),
      namedAttr(n, "keepdims", n.builder().getUnitAttr())};
  FailureOr<Value> wide = convert(x, computeType);
  if (failed(wide))
    return failure();
  FailureOr<Value> mean = n.create<ReduceMeanOp>(*wide, reduceAttrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = n.create<SubOp>(ValueRange{*wide, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squared = n.create<MulOp>(ValueRange{*centered, *centered});
  if (failed(squared))
    return failure();
  FailureOr<Value> variance = n.create<ReduceMeanOp>(*squared, reduceAttrs);
  if (failed(variance))
    return failure();
  FailureOr<Scaled> scaled =
      divideByStdDev(n, *centered, *variance, epsilon, computeType);
  if (failed(scaled))
    return failure();
  FailureOr<Value> narrowed = convert(scaled->normalized, elementType);
  if (failed(narrowed))
    return failure();
  return Normalized{*narrowed, *mean, scaled->invStdDev};
}

/// value * scale + bias, each optional input reshaped to `shape` first (a
/// per-channel vector to [C, 1, 1]); absent inputs add no op.
FailureOr<Value> scaleAndShift(NodeImporter &n, Value value, size_t scaleInput,
                               size_t biasInput, ArrayRef<int64_t> shape) {
  FailureOr<Value> result = value;
  for (auto [input, isScale] :
       {std::pair{scaleInput, true}, std::pair{biasInput, false}}) {
    if (!n.hasInput(input))
      continue;
    FailureOr<Value> operand = n.input(input);
    if (failed(operand))
      return failure();
    auto type = cast<RankedTensorType>(operand->getType());
    if (!shape.empty()) {
      int64_t expected = 1;
      for (int64_t dim : shape)
        expected *= dim;
      if (type.getNumElements() != expected)
        return n.error("input " + Twine(input) + " (" +
                       (isScale ? "scale" : "bias") + ") has " +
                       Twine(type.getNumElements()) + " elements, expected " +
                       Twine(expected));
      *operand = n.reshape(*operand, shape);
    }
    result = isScale ? n.create<MulOp>(ValueRange{*result, *operand})
                     : n.create<AddOp>(ValueRange{*result, *operand});
    if (failed(result))
      return failure();
  }
  return result;
}

LogicalResult importComputedStatistics(NodeImporter &n,
                                       ArrayRef<Value> operands,
                                       bool trainingMode, double epsilon) {
  Value x = operands[0];
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 2)
    return n.error("expects an input of rank >= 2");
  // Per-channel values as [C, 1, ...] against x's [N, C, ...].
  SmallVector<int64_t> channelShape(type.getRank() - 1, 1);
  channelShape[0] = type.getDimSize(1);
  if (trainingMode) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != 1)
        axes.push_back(d);
    FailureOr<Normalized> parts =
        normalize(n, x, axes, epsilon, type.getElementType());
    if (failed(parts))
      return failure();
    return defineResult(
        n, scaleAndShift(n, parts->normalized, 1, 2, channelShape));
  }
  FailureOr<Value> centered =
      n.create<SubOp>(ValueRange{x, n.reshape(operands[3], channelShape)});
  if (failed(centered))
    return failure();
  FailureOr<Scaled> scaled =
      divideByStdDev(n, *centered, n.reshape(operands[4], channelShape),
                     epsilon, type.getElementType());
  if (failed(scaled))
    return failure();
  return defineResult(n,
                      scaleAndShift(n, scaled->normalized, 1, 2, channelShape));
}

/// The float type of a stash_type attribute (an ONNX element type).
FailureOr<Type> stashType(NodeImporter &n) {
  int64_t stash = n.intAttr("stash_type", onnx::TensorProto::FLOAT);
  Type type = convertElementType(stash, n.context());
  if (!type || !isa<FloatType>(type))
    return n.error("stash_type " + Twine(stash) +
                   " is not a floating-point type");
  return type;
}

/// Normalises over the axes from `axis` on; Mean and InvStdDev (outputs 1
/// and 2, in stash_type) keep the normalised axes as size 1.
LogicalResult importLayerNormalization(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", -1), type.getRank());
  FailureOr<Type> computeType = stashType(n);
  if (failed(axis) || failed(computeType))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < type.getRank(); ++d)
    axes.push_back(d);
  FailureOr<Normalized> parts =
      normalize(n, *x, axes, n.floatAttr("epsilon", 1e-5), *computeType);
  if (failed(parts))
    return failure();
  n.setOutput(1, parts->mean);
  n.setOutput(2, parts->invStdDev);
  return defineResult(n, scaleAndShift(n, parts->normalized, 1, 2, {}));
}

/// Channels in num_groups groups, each normalised over its channels and the
/// spatial axes as x reshaped to [N, G, C / G * spatial]. Version 18 scales
/// and shifts per group, version 21 per channel.
LogicalResult importGroupNormalization(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2)
    return n.error("expects an input of rank >= 2");
  if (!n.hasAttr("num_groups"))
    return n.error("expects a num_groups attribute");
  int64_t groups = n.intAttr("num_groups", 1);
  int64_t channels = type.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return n.error("num_groups " + Twine(groups) + " does not divide the " +
                   Twine(channels) + " channels");
  FailureOr<Type> computeType =
      n.version() >= 21 ? stashType(n) : FailureOr<Type>(type.getElementType());
  if (failed(computeType))
    return failure();
  if (!n.hasInput(1) || !n.hasInput(2))
    return n.error("expects scale and bias inputs");
  int64_t batch = type.getDimSize(0);
  int64_t perGroup = type.getNumElements() / std::max<int64_t>(batch, 1) /
                     std::max<int64_t>(groups, 1);
  Value grouped = n.reshape(*x, {batch, groups, perGroup});
  FailureOr<Normalized> parts =
      normalize(n, grouped, {2}, n.floatAttr("epsilon", 1e-5), *computeType);
  if (failed(parts))
    return failure();
  if (n.version() < 21) {
    FailureOr<Value> scaled =
        scaleAndShift(n, parts->normalized, 1, 2, {groups, 1});
    if (failed(scaled))
      return failure();
    return defineResult(n, n.reshape(*scaled, type.getShape()));
  }
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel.front() = channels;
  return defineResult(
      n, scaleAndShift(n, n.reshape(parts->normalized, type.getShape()), 1, 2,
                       perChannel));
}

/// Each channel of each sample normalised over the spatial axes, then
/// scaled and shifted per channel.
LogicalResult importInstanceNormalization(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 3)
    return n.error("expects an input of rank >= 3 (N, C and spatial axes)");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  FailureOr<Normalized> parts = normalize(
      n, *x, axes, n.floatAttr("epsilon", 1e-5), type.getElementType());
  if (failed(parts))
    return failure();
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel.front() = type.getDimSize(1);
  return defineResult(n, scaleAndShift(n, parts->normalized, 1, 2, perChannel));
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
      // Decomposed into reductions and elementwise ops, whose gradients
      // they use.
      {"GroupNormalization", importGroupNormalization, {18, 21}},
      {"InstanceNormalization", importInstanceNormalization, {6, 22}},
      {"LRN", importLRN, {13}},
      {"LayerNormalization", importLayerNormalization, {17}},
      {"LogSoftmax", importSoftmax<LogSoftmaxOp>, {13}},
      {"Softmax", importSoftmax<SoftmaxOp>, {13}},
  };
}

} // namespace fastnn::onnx_import
