//===- PlanFusion.cpp - the fastnn-plan-fusion pass -----------------------===//
//
// The target's fusion and code generation choices, recorded on the ops as
// the attributes fastnn-lower-to-runtime reads (LoweringImpl.h names them).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNPLANFUSION
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {
namespace {

/// How many ops after an elementwise op its user may stand for the op to be
/// computed inside the user's loop nest.
constexpr int kMaxInlineDistance = 8;

bool isFloat(Value value) {
  return isa<FloatType>(
      cast<RankedTensorType>(value.getType()).getElementType());
}

/// Which value's buffer each fused or aliasing result is, as the lowering
/// will see it.
class Aliases {
public:
  void add(Value result, Value source) { sourceOf[result] = source; }
  bool contains(Value value) const { return sourceOf.count(value); }
  Value root(Value value) const {
    while (Value source = sourceOf.lookup(value))
      value = source;
    return value;
  }

private:
  llvm::DenseMap<Value, Value> sourceOf;
};

class FusionPlanner {
public:
  FusionPlanner(MLIRContext *context, int64_t maxLoopReduction)
      : builder(context), maxLoopReduction(maxLoopReduction) {}

  void plan(Block &body) {
    for (Operation &op : body) {
      noteWhetherVaries(op);
      if (op.hasTrait<OpTrait::fastnn::ResultsAliasOperands>()) {
        for (auto [result, operand] :
             llvm::zip(op.getResults(), op.getOperands()))
          aliases.add(result, operand);
      } else if (auto add = dyn_cast<AddOp>(op)) {
        if (!fuseMatMulBias(add) && !fuseBatchNormResidual(add))
          fuseResidualAdd(add);
      } else if (auto relu = dyn_cast<ReluOp>(op)) {
        fuseActivation(relu, kPostOpRelu, /*relu6Kernels=*/false);
      } else if (auto clip = dyn_cast<ClipOp>(op)) {
        if (clip.getMin().isZero() && clip.getMax().isExactlyValue(6.0))
          fuseActivation(clip, kPostOpRelu6, /*relu6Kernels=*/true);
      } else if (op.hasTrait<OpTrait::fastnn::Reduction>()) {
        op.setAttr(kCodegenAttr,
                   builder.getStringAttr(reducesInLoops(&op) ? kCodegenLoops
                                                             : kCodegenKernel));
      }
    }
    for (auto conv : body.getOps<Conv2DOp>())
      chainDepthwise(conv);
    inlineElementwise(body);
  }

private:
  /// Kernels whose output can absorb a following relu, in any of their
  /// float types.
  static bool acceptsPostOp(Operation *op) {
    return op->hasTrait<OpTrait::fastnn::AcceptsPostOp>() &&
           isFloat(op->getResult(0));
  }

  /// An activation (relu, or relu6 where only convolutions and training
  /// batch norm take it) whose input a kernel computes, read by the
  /// activation alone, is the kernel's post-op.
  void fuseActivation(Operation *activation, StringRef postOp,
                      bool relu6Kernels) {
    Value input = activation->getOperand(0);
    Operation *kernel = aliases.root(input).getDefiningOp();
    if (!kernel || !input.hasOneUse() || !acceptsPostOp(kernel) ||
        kernel->hasAttr(kPostOpAttr) ||
        (relu6Kernels && !isa<Conv2DOp, BatchNormTrainOp>(kernel)))
      return;
    kernel->setAttr(kPostOpAttr, builder.getStringAttr(postOp));
    activation->setAttr(kFusedIntoProducerAttr, builder.getUnitAttr());
    aliases.add(activation->getResult(0), input);
  }

  /// `add(conv(x), r)`, the convolution read by the add alone, is the
  /// convolution accumulating into r's buffer (a residual add, ResNet's
  /// shortcut) when r's buffer may be overwritten there: a per-step value
  /// computed before the convolution that nothing but the add reads later
  /// (nor the convolution itself). A relu or relu6 after the add then
  /// becomes the convolution's activation.
  void fuseResidualAdd(AddOp add) {
    if (!isFloat(add.getResult()))
      return;
    for (auto [product, addend] : {std::pair{add.getLhs(), add.getRhs()},
                                   std::pair{add.getRhs(), add.getLhs()}}) {
      auto conv = product.getDefiningOp<Conv2DOp>();
      if (!conv || !product.hasOneUse() || conv->hasAttr(kPostOpAttr) ||
          conv->hasAttr(kAccumulateAttr) ||
          addend.getType() != product.getType() ||
          add.getType() != product.getType())
        continue;
      // An addend computed after the convolution from values it could
      // read before (ResNet v1's subsampled shortcut) is computed first.
      Operation *producer = addend.getDefiningOp();
      Operation *next = producer ? producer->getNextNode() : nullptr;
      bool moved = producer && producer->getBlock() == conv->getBlock() &&
                   conv->isBeforeInBlock(producer) &&
                   producer->getNumRegions() == 0 &&
                   isMemoryEffectFree(producer) &&
                   llvm::all_of(producer->getOperands(), [&](Value operand) {
                     Operation *def = operand.getDefiningOp();
                     return !def || def->getBlock() != conv->getBlock() ||
                            def->isBeforeInBlock(conv);
                   });
      if (moved)
        producer->moveBefore(conv);
      if (!mayOverwrite(addend, conv, add)) {
        if (moved)
          producer->moveBefore(next);
        continue;
      }
      conv->setAttr(kAccumulateAttr, builder.getUnitAttr());
      add->setAttr(kFusedIntoProducerAttr, builder.getUnitAttr());
      aliases.add(add.getResult(), product);
      return;
    }
  }

  /// Whether \p kernel may write into \p value's buffer: a buffer computed
  /// in this step before \p kernel (not a parameter, a constant, a step
  /// input, or computed from parameters and constants alone) that neither \p
  /// kernel nor any op after it reads, through any view, except \p fusedAdd.
  bool mayOverwrite(Value value, Operation *kernel, Operation *fusedAdd) {
    Value root = aliases.root(value);
    Operation *producer = root.getDefiningOp();
    if (!producer || producer->getBlock() != kernel->getBlock() ||
        !producer->isBeforeInBlock(kernel) || !varying.contains(producer) ||
        !(producer->hasTrait<OpTrait::fastnn::RunsAsKernel>() ||
          producer->hasTrait<OpTrait::fastnn::Elementwise>()))
      return false;
    SmallVector<Value> views = {root};
    while (!views.empty()) {
      Value view = views.pop_back_val();
      for (Operation *user : view.getUsers()) {
        if (user == fusedAdd)
          continue;
        if (user == kernel || user->getBlock() != kernel->getBlock() ||
            kernel->isBeforeInBlock(user))
          return false;
        if (user->hasTrait<OpTrait::fastnn::ResultsAliasOperands>() ||
            user->hasAttr(kFusedIntoProducerAttr))
          llvm::append_range(views, user->getResults());
      }
    }
    return true;
  }

  /// Records whether \p op's results can differ between runs of the step:
  /// it reads a step input or a value that varies, or reads nothing and is
  /// no parameter or constant. (In an inference step the lowering computes
  /// the others once, into buffers that live on.)
  void noteWhetherVaries(Operation &op) {
    bool varies = op.getNumOperands() == 0
                      ? !isa<ParamOp, ConstantOp>(op)
                      : llvm::any_of(op.getOperands(), [&](Value operand) {
                          Operation *producer = operand.getDefiningOp();
                          return !producer || varying.contains(producer) ||
                                 producer->getBlock() != op.getBlock();
                        });
    if (varies)
      varying.insert(&op);
  }

  /// A pointwise convolution whose only reader is a depthwise convolution
  /// of the same type and layout, neither accumulating, is computed by it
  /// (after the activations are fused: each keeps its own), and so is that
  /// depthwise convolution by a pointwise one that alone reads it (which may
  /// accumulate): an inverted residual block is one kernel. Not a pointwise
  /// convolution computed once (its buffer must hold on while the chain
  /// computes anew), nor one that already ends a chain.
  void chainDepthwise(Conv2DOp pointwise) {
    auto sameKind = [&](Conv2DOp next) {
      return next && next.getLayout() == pointwise.getLayout() &&
             next.getType().getElementType() ==
                 pointwise.getType().getElementType();
    };
    auto producer =
        aliases.root(pointwise.getInput()).getDefiningOp<Conv2DOp>();
    if (!isPointwiseConv(pointwise) || !isFloat(pointwise.getResult()) ||
        !varying.contains(pointwise) || pointwise->hasAttr(kAccumulateAttr) ||
        (producer && producer->hasAttr(kChainedIntoConsumerAttr)))
      return;
    Conv2DOp depthwise = soleConvConsumer(pointwise);
    if (!sameKind(depthwise) || !isDepthwiseConv(depthwise) ||
        depthwise->hasAttr(kAccumulateAttr))
      return;
    pointwise->setAttr(kChainedIntoConsumerAttr, builder.getUnitAttr());
    Conv2DOp projection = soleConvConsumer(depthwise);
    if (sameKind(projection) && isPointwiseConv(projection))
      depthwise->setAttr(kChainedIntoConsumerAttr, builder.getUnitAttr());
  }

  /// `add(matmul(a, b), bias)` with a vector bias over the last dimension,
  /// computed before the matmul runs, is the matmul's bias.
  bool fuseMatMulBias(AddOp add) {
    for (auto [product, bias] : {std::pair{add.getLhs(), add.getRhs()},
                                 std::pair{add.getRhs(), add.getLhs()}}) {
      auto matmul = product.getDefiningOp<MatMulOp>();
      if (!matmul || !product.hasOneUse() || matmul->hasAttr(kBiasFusedAttr) ||
          matmul->hasAttr(kPostOpAttr) || add.getType() != matmul.getType() ||
          !isFloat(product))
        continue;
      auto biasType = cast<RankedTensorType>(bias.getType());
      if (biasType.getRank() != 1 ||
          biasType.getDimSize(0) != matmul.getType().getShape().back())
        continue;
      Operation *biasDef = bias.getDefiningOp();
      if (biasDef && !biasDef->isBeforeInBlock(matmul))
        continue;
      matmul->setAttr(kBiasFusedAttr, builder.getUnitAttr());
      add->setAttr(kFusedIntoProducerAttr, builder.getUnitAttr());
      aliases.add(add.getResult(), product);
      return true;
    }
    return false;
  }

  /// `add(batch_norm_train(x), r)`, the batch norm's result read by the add
  /// alone and r computed before it, is the batch norm adding r as it
  /// normalises (ResNet's residual add, whose addend the backward still
  /// reads, so no kernel may write into it): one pass over memory instead
  /// of three. A relu or relu6 after the add then becomes the batch norm's
  /// activation.
  bool fuseBatchNormResidual(AddOp add) {
    for (auto [product, residual] : {std::pair{add.getLhs(), add.getRhs()},
                                     std::pair{add.getRhs(), add.getLhs()}}) {
      auto bn = product.getDefiningOp<BatchNormTrainOp>();
      if (!bn || product != bn.getResult() || !product.hasOneUse() ||
          bn->hasAttr(kPostOpAttr) || bn->hasAttr(kResidualFusedAttr) ||
          !isFloat(product) || residual.getType() != product.getType() ||
          add.getType() != product.getType())
        continue;
      Operation *residualDef = residual.getDefiningOp();
      if (residualDef && (residualDef->getBlock() != bn->getBlock() ||
                          !residualDef->isBeforeInBlock(bn)))
        continue;
      bn->setAttr(kResidualFusedAttr, builder.getUnitAttr());
      add->setAttr(kFusedIntoProducerAttr, builder.getUnitAttr());
      aliases.add(add.getResult(), product);
      return true;
    }
    return false;
  }

  /// f32 reductions where each output element reduces at most
  /// `maxLoopReduction` elements (a bias gradient, a global pool) are
  /// generated as loops, in order; the others are kernel calls.
  bool reducesInLoops(Operation *op) const {
    auto input = cast<RankedTensorType>(op->getOperand(0).getType());
    if (!input.getElementType().isF32())
      return false;
    int64_t extent = 1;
    for (int64_t axis :
         op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
      extent *= input.getDimSize(axis);
    return extent <= maxLoopReduction;
  }

  /// An elementwise op whose result only one elementwise op of the same
  /// shape, a few ops later, reads is computed inside that op's loop nest:
  /// no buffer, and one pass over memory instead of two. Chains inline
  /// whole. So is a transpose, which the nest reads through a permuted
  /// indexing map (a filter's NCHW -> NHWC transpose and its cast to the
  /// low type are one pass).
  void inlineElementwise(Block &body) {
    for (Operation &op : body) {
      if (!(op.hasTrait<OpTrait::fastnn::Elementwise>() ||
            isa<TransposeOp>(op)) ||
          op.getNumResults() != 1)
        continue;
      Value result = op.getResult(0);
      if (!result.hasOneUse() || aliases.contains(result))
        continue;
      Operation *user = *result.getUsers().begin();
      if (!user->hasTrait<OpTrait::fastnn::Elementwise>() ||
          user->getBlock() != &body || aliases.contains(user->getResult(0)) ||
          cast<RankedTensorType>(user->getResult(0).getType()).getShape() !=
              cast<RankedTensorType>(result.getType()).getShape())
        continue;
      // A user that reads a collective's result waits for it first; the
      // producer stays where it overlaps the communication.
      if (llvm::any_of(user->getOperands(), [&](Value operand) {
            return aliases.root(operand).getDefiningOp<AllReduceOp>();
          }))
        continue;
      // The user must follow closely: moving the reads there keeps the
      // producer's operands alive until then (a forward value read only in
      // the backward would hold two buffers for one), and the scan below
      // stays bounded. Nor may the reads move past a write to existing
      // buffers (a state update, an optimizer step, a collective, a
      // convolution accumulating into its addend).
      Operation *between = op.getNextNode();
      for (int distance = 0; distance < kMaxInlineDistance; ++distance) {
        if (between == user) {
          op.setAttr(kInlineIntoConsumerAttr, builder.getUnitAttr());
          break;
        }
        if (!isMemoryEffectFree(between) || between->hasAttr(kAccumulateAttr))
          break;
        between = between->getNextNode();
      }
    }
  }

  Builder builder;
  int64_t maxLoopReduction;
  Aliases aliases;
  llvm::DenseSet<Operation *> varying;
};

struct PlanFusionPass
    : public ::fastnn::impl::FastNNPlanFusionBase<PlanFusionPass> {
  using FastNNPlanFusionBase::FastNNPlanFusionBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isExternal())
        planFusion(stepBlock(function), maxLoopReduction);
  }
};

} // namespace

bool isPointwiseConv(Conv2DOp conv) {
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  bool nhwc = conv.getLayout() == Layout::NHWC;
  return filter.getDimSize(nhwc ? 1 : 2) == 1 &&
         filter.getDimSize(nhwc ? 2 : 3) == 1 && conv.getGroups() == 1 &&
         llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPads(), [](int64_t p) { return p == 0; });
}

bool isDepthwiseConv(Conv2DOp conv) {
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  bool nhwc = conv.getLayout() == Layout::NHWC;
  return conv.getGroups() > 1 && filter.getDimSize(nhwc ? 3 : 1) == 1 &&
         filter.getDimSize(0) == conv.getGroups();
}

Conv2DOp soleConvConsumer(Conv2DOp conv) {
  Value value = conv.getResult();
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (isa<ReluOp, ClipOp>(user) && user->hasAttr(kFusedIntoProducerAttr)) {
      value = user->getResult(0);
      continue;
    }
    auto consumer = dyn_cast<Conv2DOp>(user);
    return consumer && consumer.getInput() == value ? consumer : Conv2DOp();
  }
  return {};
}

void planFusion(Block &body, int64_t maxLoopReduction) {
  FusionPlanner(body.getParentOp()->getContext(), maxLoopReduction).plan(body);
}
} // namespace fastnn::lowering
