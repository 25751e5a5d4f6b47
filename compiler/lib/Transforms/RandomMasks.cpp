//===- RandomMasks.cpp - the fastnn-random-masks pass ---------------------===//
//
// Exporters decompose dropout and stochastic depth into a uniform draw
// compared with a constant and cast to a float mask. The comparison is a
// Bernoulli mask whose probability is known at compile time; as a
// `random_mask` it keeps drawing in training and is its mean at inference,
// which is what `dropout` does and what a framework's eval mode computes.
//
//===----------------------------------------------------------------------===//

#include "StepBuilder.h"

#include "fastnn/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <optional>

namespace fastnn {
#define GEN_PASS_DEF_FASTNNRANDOMMASKS
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ::fastnn::step::typeOf;

/// The value of a splat float constant.
std::optional<double> splatValue(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// P(u < bound) for u uniform on [low, high).
double probabilityBelow(RandomUniformOp draw, double bound) {
  double low = draw.getLow().convertToDouble();
  double high = draw.getHigh().convertToDouble();
  if (high == low)
    return low < bound ? 1.0 : 0.0;
  return std::clamp((bound - low) / (high - low), 0.0, 1.0);
}

/// The probability that \p compare holds, where it compares a uniform draw
/// read by it alone with a splat constant, and the draw.
std::optional<std::pair<double, RandomUniformOp>>
bernoulliOf(Operation *compare) {
  if (!isa<LessOp, GreaterOp>(compare))
    return std::nullopt;
  Value lhs = compare->getOperand(0), rhs = compare->getOperand(1);
  for (bool drawOnLeft : {true, false}) {
    auto draw = (drawOnLeft ? lhs : rhs).getDefiningOp<RandomUniformOp>();
    std::optional<double> bound = splatValue(drawOnLeft ? rhs : lhs);
    if (!draw || draw.getStep() || !bound || !draw->hasOneUse() ||
        typeOf(draw.getResult()).getShape() !=
            typeOf(compare->getResult(0)).getShape())
      continue;
    // draw < c and c > draw ask for the draw below c.
    bool below = isa<LessOp>(compare) == drawOnLeft;
    double p = probabilityBelow(draw, *bound);
    return std::pair{below ? p : 1.0 - p, draw};
  }
  return std::nullopt;
}

struct RandomMasksPass
    : public ::fastnn::impl::FastNNRandomMasksBase<RandomMasksPass> {
  void runOnOperation() override {
    SmallVector<CastOp> casts;
    getOperation().walk([&](CastOp cast) {
      if (isa<FloatType>(cast.getType().getElementType()))
        casts.push_back(cast);
    });
    for (CastOp cast : casts) {
      Operation *compare = cast.getInput().getDefiningOp();
      if (!compare || !compare->hasOneUse())
        continue;
      auto bernoulli = bernoulliOf(compare);
      if (!bernoulli)
        continue;
      auto [probability, draw] = *bernoulli;
      OpBuilder b(cast);
      Value mask = RandomMaskOp::create(
          b, cast.getLoc(), cast.getType(),
          /*step=*/Value(), b.getF64FloatAttr(probability), draw.getSeedAttr());
      cast.replaceAllUsesWith(mask);
      cast.erase();
      compare->erase();
      draw.erase();
    }
  }
};

} // namespace
