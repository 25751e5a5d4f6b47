//===- KernelBase.cpp - descriptor checks and fnn_kernel_destroy ----------===//

#include "fastnn/runtime/KernelBase.h"

#include <sstream>

std::string fastnn::runtime::formatPair(const int64_t *Values,
                                        const char *Sep) {
  return std::to_string(Values[0]) + Sep + std::to_string(Values[1]);
}

void fastnn::runtime::checkShape(const fnn_shape &Shape, const char *Name,
                                 int64_t MinRank, int64_t MaxRank) {
  if (Shape.rank < MinRank || Shape.rank > MaxRank) {
    std::ostringstream S;
    S << Name << " has rank " << Shape.rank << ", expected ";
    if (MinRank == MaxRank)
      S << MinRank;
    else
      S << MinRank << " to " << MaxRank;
    throw KernelError(S.str());
  }
  for (int64_t I = 0; I < Shape.rank; ++I)
    if (Shape.dims[I] <= 0)
      throw KernelError(std::string(Name) + " has a non-positive dimension");
}

void fastnn::runtime::checkF32(int64_t DType) {
  if (DType != FNN_F32)
    throw KernelError("dtype " + std::to_string(DType) +
                      " is not supported by this kernel (only FNN_F32; "
                      "mixed precision keeps this op in float32)");
}

void fastnn::runtime::checkFloatType(int64_t DType) {
  if (DType != FNN_F32 && DType != FNN_BF16 && DType != FNN_F16)
    throw KernelError("dtype " + std::to_string(DType) +
                      " is not supported (FNN_F32, FNN_BF16 or FNN_F16)");
}

void fastnn::runtime::checkLayout(int64_t Layout) {
  if (Layout != FNN_NCHW && Layout != FNN_NHWC)
    throw KernelError("unknown layout " + std::to_string(Layout));
}

namespace {
/// Throws unless \p PostOp is an activation, optionally or'ed with one of
/// FNN_POST_ACCUMULATE and FNN_POST_RESIDUAL.
void checkPostOpWord(int64_t PostOp) {
  int64_t Activation = PostOp & FNN_POST_ACTIVATION_MASK;
  if ((PostOp & ~int64_t(FNN_POST_ACTIVATION_MASK | FNN_POST_ACCUMULATE |
                         FNN_POST_RESIDUAL)) ||
      ((PostOp & FNN_POST_ACCUMULATE) && (PostOp & FNN_POST_RESIDUAL)) ||
      (Activation != FNN_POST_NONE && Activation != FNN_POST_RELU &&
       Activation != FNN_POST_RELU6))
    throw fastnn::runtime::KernelError("unknown post-op " +
                                       std::to_string(PostOp));
}
} // namespace

void fastnn::runtime::checkPostOp(int64_t PostOp) {
  checkPostOpWord(PostOp);
  if (PostOp & FNN_POST_RESIDUAL)
    throw KernelError("conv2d takes FNN_POST_ACCUMULATE (the residual in the "
                      "output buffer), not FNN_POST_RESIDUAL");
}

void fastnn::runtime::checkReluPostOp(int64_t PostOp, const char *Kernel) {
  checkPostOpWord(PostOp);
  if (PostOp != FNN_POST_NONE && PostOp != FNN_POST_RELU)
    throw KernelError(std::string(Kernel) +
                      " takes post-op FNN_POST_NONE or "
                      "FNN_POST_RELU, not" +
                      postOpText(PostOp).substr(1));
}

void fastnn::runtime::checkTrainingBatchNormPostOp(int64_t PostOp) {
  checkPostOpWord(PostOp);
  if (PostOp & FNN_POST_ACCUMULATE)
    throw KernelError("batch_norm (training) takes post-op FNN_POST_NONE, "
                      "FNN_POST_RELU or FNN_POST_RELU6, optionally with "
                      "FNN_POST_RESIDUAL, not" +
                      postOpText(PostOp).substr(1));
}

std::string fastnn::runtime::postOpText(int64_t PostOp) {
  std::string Text = PostOp & FNN_POST_ACCUMULATE ? ", accumulate"
                     : PostOp & FNN_POST_RESIDUAL ? ", residual"
                                                  : "";
  switch (PostOp & FNN_POST_ACTIVATION_MASK) {
  case FNN_POST_RELU:
    return Text + ", relu";
  case FNN_POST_RELU6:
    return Text + ", relu6";
  default:
    return Text;
  }
}

extern "C" void fnn_kernel_destroy(fnn_kernel *Kernel) { delete Kernel; }
