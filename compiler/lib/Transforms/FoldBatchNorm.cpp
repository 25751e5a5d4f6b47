//===- FoldBatchNorm.cpp - the fastnn-fold-batch-norm pass ----------------===//
//
// Inference batch norm after a convolution is a per-output-channel affine
// map, so it folds into the convolution's filter and bias:
//   a = scale / sqrt(variance + epsilon)
//   filter' = filter * a (over O), bias' = (bias - mean) * a + shift
// The fold's ops read parameters only: an inference step computes them on
// its first run (fastnn-lower-to-runtime), not on every run.
//
//===----------------------------------------------------------------------===//

#include "StepBuilder.h"

#include "fastnn/Transforms/Passes.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNFOLDBATCHNORM
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ::fastnn::step::binary;
using ::fastnn::step::scalar;
using ::fastnn::step::typeOf;

/// A parameter read or a constant: what the fold may read without adding
/// work to every run.
bool isState(Value value) {
  Operation *producer = value.getDefiningOp();
  return producer && isa<ParamOp, ConstantOp>(producer);
}

bool isF32(Value value) { return typeOf(value).getElementType().isF32(); }

/// The convolution `bn` normalises, if the fold applies: its result read by
/// `bn` alone, its filter, bias and the normalisation's operands state, all
/// in float32, and the channels where the layouts put them.
Conv2DOp foldableConvolution(BatchNormOp bn) {
  auto conv = bn.getInput().getDefiningOp<Conv2DOp>();
  if (!conv || !conv.getResult().hasOneUse() ||
      conv.getLayout() != bn.getLayout())
    return {};
  SmallVector<Value> read = {conv.getFilter(), bn.getScale(), bn.getBias(),
                             bn.getMean(), bn.getVariance()};
  if (conv.getBias())
    read.push_back(conv.getBias());
  if (!llvm::all_of(read, isState) || !llvm::all_of(read, isF32) ||
      !isF32(conv.getResult()))
    return {};
  return conv;
}

void fold(BatchNormOp bn, Conv2DOp conv) {
  // At the batch norm, after every operand it and the convolution read.
  OpBuilder b(bn);
  Location loc = bn.getLoc();
  Value epsilon = scalar(b, loc, bn.getEpsilon().convertToDouble());
  Value factor = binary<DivOp>(
      b, loc, bn.getScale(),
      SqrtOp::create(b, loc, binary<AddOp>(b, loc, bn.getVariance(), epsilon)));
  // O is the filter's first dimension in both layouts (OIHW, OHWI).
  RankedTensorType filterType = typeOf(conv.getFilter());
  SmallVector<int64_t> column(filterType.getRank(), 1);
  column[0] = filterType.getDimSize(0);
  Value perOutput =
      ReshapeOp::create(b, loc, typeOf(factor).clone(column), factor);
  Value filter = binary<MulOp>(b, loc, conv.getFilter(), perOutput);
  Value bias =
      conv.getBias()
          ? binary<AddOp>(b, loc,
                          binary<MulOp>(b, loc,
                                        binary<SubOp>(b, loc, conv.getBias(),
                                                      bn.getMean()),
                                        factor),
                          bn.getBias())
          : binary<SubOp>(b, loc, bn.getBias(),
                          binary<MulOp>(b, loc, bn.getMean(), factor));
  OperationState state(conv.getLoc(), Conv2DOp::getOperationName());
  state.addOperands({conv.getInput(), filter, bias});
  state.addAttributes(conv->getAttrs());
  state.addTypes(conv.getType());
  Operation *folded = b.create(state);
  bn.getResult().replaceAllUsesWith(folded->getResult(0));
  bn.erase();
  conv.erase();
}

struct FoldBatchNormPass
    : public ::fastnn::impl::FastNNFoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp bn) { norms.push_back(bn); });
    for (BatchNormOp bn : norms)
      if (Conv2DOp conv = foldableConvolution(bn))
        fold(bn, conv);
  }
};

} // namespace
