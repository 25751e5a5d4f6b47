//===- ArenaEstimate.h - the arena a step will be lowered with --*- C++ -*-===//
//
// What fastnn-lower-to-runtime's arena plan makes of a step before the step
// is lowered, so that a pass on the fastnn dialect (fastnn-rematerialize)
// can measure the effect of its rewrites on the arena.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_CONVERSION_ARENAESTIMATE_H
#define FASTNN_CONVERSION_ARENAESTIMATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace fastnn {

struct ArenaEstimate {
  /// The arena's size in bytes.
  int64_t totalBytes = 0;
  /// The op of the step's block at which the buffers alive together hold
  /// the most bytes (null in an empty step), and those bytes.
  mlir::Operation *peakOp = nullptr;
  int64_t peakLiveBytes = 0;
};

/// Plans the arena of `step` as fastnn-plan-fusion{max-loop-reduction=
/// `maxLoopReduction`} followed by fastnn-lower-to-runtime would, on a copy
/// of the function without fusion decisions: `step` is left as it is.
mlir::FailureOr<ArenaEstimate> estimateArena(mlir::func::FuncOp step,
                                             int64_t maxLoopReduction);

} // namespace fastnn

#endif // FASTNN_CONVERSION_ARENAESTIMATE_H
