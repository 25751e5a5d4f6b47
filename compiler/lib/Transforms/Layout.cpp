//===- Layout.cpp - the fastnn-layout pass --------------------------------===//
//
// Two phases. Assignment gives every convolution, pooling and batch norm
// the layout the target's kernels want, wrapping each op that changes in
// transposes to and from its old layout. Propagation then moves transposes
// towards each other through the ops that do not care about the layout
// (elementwise ops, concatenations, padding, reductions whose kept
// dimensions stay in order), so that pairs meet and cancel (TransposeOp's
// folder composes them), and moves a transpose that reads a function input
// into the input itself: whoever fills the input (the data loader) writes
// that layout instead.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNLAYOUT
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

/// NCHW -> NHWC and back, as transpose permutations (result dim i is input
/// dim p[i]).
constexpr int64_t ToNHWC[] = {0, 2, 3, 1};
constexpr int64_t ToNCHW[] = {0, 3, 1, 2};

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value transpose(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> permutation) {
  RankedTensorType type = typeOf(value);
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  return TransposeOp::create(b, loc, type.clone(shape), value,
                             b.getDenseI64ArrayAttr(permutation));
}

SmallVector<int64_t> inverse(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> result(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    result[p] = static_cast<int64_t>(i);
  return result;
}

/// Rewrites `op` (conv2d, pooling or batch norm, rank 4) to `layout`:
/// activations are transposed in and the result back out, a convolution's
/// filter goes from OIHW to OHWI or back.
void assign(Operation *op, Layout layout) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  ArrayRef<int64_t> in = layout == Layout::NHWC ? ToNHWC : ToNCHW;
  ArrayRef<int64_t> out = layout == Layout::NHWC ? ToNCHW : ToNHWC;
  op->setOperand(0, transpose(b, loc, op->getOperand(0), in));
  if (auto conv = dyn_cast<Conv2DOp>(op))
    conv.getFilterMutable().assign(transpose(b, loc, conv.getFilter(), in));
  op->setAttr("layout", LayoutAttr::get(op->getContext(), layout));
  b.setInsertionPointAfter(op);
  Value result = op->getResult(0);
  RankedTensorType old = typeOf(result);
  SmallVector<int64_t> shape;
  for (int64_t p : in)
    shape.push_back(old.getDimSize(p));
  result.setType(old.clone(shape));
  Value back = transpose(b, loc, result, out);
  result.replaceAllUsesExcept(back, back.getDefiningOp());
}

/// Layout-agnostic ops whose operands all arrive transposed the same way
/// compute on the untransposed values instead, and their result is
/// transposed: the transpose moves past them, towards the next one it may
/// cancel with. Scalars need nothing; a function input gets the inverse
/// transpose, which then moves into the input with the others.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::fastnn::LayoutAgnostic>() ||
        op->getNumResults() != 1)
      return failure();
    ArrayRef<int64_t> permutation;
    for (Value operand : op->getOperands()) {
      if (typeOf(operand).getRank() == 0 || isa<BlockArgument>(operand))
        continue;
      auto producer = operand.getDefiningOp<TransposeOp>();
      if (!producer ||
          (!permutation.empty() && producer.getPermutation() != permutation))
        return failure();
      permutation = producer.getPermutation();
    }
    if (permutation.empty())
      return failure();
    SmallVector<int64_t> original = inverse(permutation);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (typeOf(operand).getRank() == 0)
        operands.push_back(operand);
      else if (isa<BlockArgument>(operand))
        operands.push_back(
            transpose(rewriter, op->getLoc(), operand, original));
      else
        operands.push_back(operand.getDefiningOp<TransposeOp>().getInput());
    }
    RankedTensorType type = typeOf(op->getResult(0));
    SmallVector<int64_t> shape;
    for (int64_t p : original)
      shape.push_back(type.getDimSize(p));
    Operation *moved = rewriter.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(type.clone(shape));
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(),
                                     moved->getResult(0), permutation));
    return success();
  }
};

/// A concatenation of tensors all transposed the same way concatenates the
/// originals along the matching axis (inception's branches, concatenated
/// over channels, stay NHWC).
struct ConcatThroughTranspose : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> permutation;
    SmallVector<Value> inputs;
    for (Value operand : op.getInputs()) {
      auto producer = operand.getDefiningOp<TransposeOp>();
      if (!producer ||
          (!permutation.empty() && producer.getPermutation() != permutation))
        return failure();
      permutation = producer.getPermutation();
      inputs.push_back(producer.getInput());
    }
    if (permutation.empty())
      return failure();
    RankedTensorType type = op.getType();
    SmallVector<int64_t> shape;
    for (int64_t p : inverse(permutation))
      shape.push_back(type.getDimSize(p));
    auto concat =
        ConcatOp::create(rewriter, op.getLoc(), type.clone(shape), inputs,
                         rewriter.getI64IntegerAttr(permutation[op.getAxis()]));
    rewriter.replaceOp(
        op, transpose(rewriter, op.getLoc(), concat.getResult(), permutation));
    return success();
  }
};

/// Padding a transposed tensor pads the original's matching dimensions
/// (every mode pads each dimension on its own), then transposes: the pads
/// before inception's average pools stay in the pools' layout.
struct PadThroughTranspose : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> permutation = producer.getPermutation();
    ArrayRef<int64_t> pads = op.getPads();
    int64_t rank = static_cast<int64_t>(permutation.size());
    SmallVector<int64_t> original(pads.size());
    for (int64_t i = 0; i < rank; ++i) {
      original[permutation[i]] = pads[i];
      original[permutation[i] + rank] = pads[i + rank];
    }
    RankedTensorType type = op.getType();
    SmallVector<int64_t> shape;
    for (int64_t p : inverse(permutation))
      shape.push_back(type.getDimSize(p));
    auto padded = PadOp::create(rewriter, op.getLoc(), type.clone(shape),
                                producer.getInput(),
                                rewriter.getDenseI64ArrayAttr(original),
                                op.getModeAttr(), op.getValueAttr());
    rewriter.replaceOp(
        op, transpose(rewriter, op.getLoc(), padded.getResult(), permutation));
    return success();
  }
};

/// A reduction of a transposed tensor whose kept dimensions stay in order
/// reduces the original's matching axes; keepdims results differ only in
/// where the size-1 dimensions sit, which a reshape fixes for free. Any op
/// with the Reduction trait (its operand, `axes` and `keepdims`).
struct ReduceThroughTranspose : RewritePattern {
  ReduceThroughTranspose(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::fastnn::Reduction>())
      return failure();
    auto producer = op->getOperand(0).getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> permutation = producer.getPermutation();
    ArrayRef<int64_t> reduced =
        op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    SmallVector<int64_t> axes;
    for (int64_t axis : reduced)
      axes.push_back(permutation[axis]);
    llvm::sort(axes);
    int64_t last = -1;
    for (auto [i, p] : llvm::enumerate(permutation)) {
      if (llvm::is_contained(reduced, static_cast<int64_t>(i)))
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    Value input = producer.getInput();
    RankedTensorType inputType = typeOf(input);
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      if (!llvm::is_contained(axes, d))
        shape.push_back(inputType.getDimSize(d));
      else if (op->hasAttr("keepdims"))
        shape.push_back(1);
    RankedTensorType type = typeOf(op->getResult(0));
    Operation *moved = rewriter.clone(*op);
    moved->setOperand(0, input);
    moved->setAttr("axes", rewriter.getDenseI64ArrayAttr(axes));
    Value result = moved->getResult(0);
    result.setType(type.clone(shape));
    if (result.getType() != type)
      result = ReshapeOp::create(rewriter, op->getLoc(), type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayoutPass : public ::fastnn::impl::FastNNLayoutBase<LayoutPass> {
  using FastNNLayoutBase::FastNNLayoutBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (inputLayout == ::fastnn::InputLayout::Reads)
      for (auto function : module.getOps<func::FuncOp>()) {
        moveIntoInput(function);
        feedNHWCImagesAsNCHW(function);
      }
    // oneDNN's brgconv convolutions read and write NHWC as it is, where NCHW
    // costs a reorder to and from a blocked layout around every call;
    // cuDNN's tensor-core kernels want NHWC too, its fp32 ones NCHW.
    Layout wanted = target == ::fastnn::Target::CUDA &&
                            precision == ::fastnn::Precision::FP32
                        ? Layout::NCHW
                        : Layout::NHWC;
    if (layout != ::fastnn::LayoutChoice::Auto)
      wanted =
          layout == ::fastnn::LayoutChoice::NHWC ? Layout::NHWC : Layout::NCHW;
    SmallVector<Operation *> changing;
    module.walk([&](Operation *op) {
      auto current = op->getAttrOfType<LayoutAttr>("layout");
      if (op->hasTrait<OpTrait::fastnn::SelectableLayout>() && current &&
          current.getValue() != wanted &&
          typeOf(op->getOperand(0)).getRank() == 4)
        changing.push_back(op);
    });
    for (Operation *op : changing)
      assign(op, wanted);

    RewritePatternSet patterns(&getContext());
    patterns.add<SinkThroughElementwise, ConcatThroughTranspose,
                 PadThroughTranspose, ReduceThroughTranspose>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    if (inputLayout == ::fastnn::InputLayout::Kernels)
      for (auto function : module.getOps<func::FuncOp>())
        moveIntoInput(function);
  }

  /// The loader writes NCHW images of 1 or 3 channels. An input shaped
  /// [N, H, W, C] with C but not H 1 or 3 can only be NHWC images; where the
  /// model reads it other than through its own transpose to NCHW (a Keras
  /// model's rescaling before tf2onnx's first Transpose), the input becomes
  /// NCHW and is read through a transpose back to NHWC, which the patterns
  /// then move towards the model's transpose to cancel.
  void feedNHWCImagesAsNCHW(func::FuncOp function) {
    if (function.isExternal())
      return;
    auto isImageChannels = [](int64_t size) { return size == 1 || size == 3; };
    OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
    SmallVector<Type> inputs(function.getArgumentTypes());
    for (BlockArgument arg : function.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (arg.use_empty() || !type || type.getRank() != 4 ||
          !isImageChannels(type.getDimSize(3)) ||
          isImageChannels(type.getDimSize(1)) ||
          llvm::all_of(arg.getUsers(), [](Operation *user) {
            auto read = dyn_cast<TransposeOp>(user);
            return read && read.getPermutation() == ArrayRef(ToNCHW);
          }))
        continue;
      SmallVector<int64_t> shape;
      for (int64_t p : ToNCHW)
        shape.push_back(type.getDimSize(p));
      arg.setType(type.clone(shape));
      inputs[arg.getArgNumber()] = arg.getType();
      Value nhwc = transpose(b, arg.getLoc(), arg, ToNHWC);
      arg.replaceAllUsesExcept(nhwc, nhwc.getDefiningOp());
    }
    function.setType(
        FunctionType::get(&getContext(), inputs, function.getResultTypes()));
  }

  /// An input read only through one transpose becomes the transposed
  /// tensor: the caller (the data loader) fills that layout directly.
  /// Before assignment the transposes are the model's own (tf2onnx's NHWC
  /// input read as NCHW); after propagation, the kernels'.
  void moveIntoInput(func::FuncOp function) {
    if (function.isExternal())
      return;
    SmallVector<Type> inputs(function.getArgumentTypes());
    for (BlockArgument arg : function.getArguments()) {
      if (arg.use_empty())
        continue;
      auto first = dyn_cast<TransposeOp>(*arg.getUsers().begin());
      if (!first || !llvm::all_of(arg.getUsers(), [&](Operation *user) {
            auto other = dyn_cast<TransposeOp>(user);
            return other && other.getPermutation() == first.getPermutation();
          }))
        continue;
      arg.setType(first.getType());
      inputs[arg.getArgNumber()] = first.getType();
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        user->getResult(0).replaceAllUsesWith(arg);
        user->erase();
      }
    }
    function.setType(
        FunctionType::get(&getContext(), inputs, function.getResultTypes()));
  }
};

} // namespace
