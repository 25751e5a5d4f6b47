//===- Optimizers.cu - the eight optimizers as CUDA kernels ---------------===//
//
// No library has TF1's optimizer updates. Each element runs the shared
// per-element update of OptimizerMath.h; the learning rate, the step and the
// apply flag are read here, on the device, so a step captured in a graph
// or looping on the device needs no host round trip.
//
//===----------------------------------------------------------------------===//

#include "ElementTypes.cuh"
#include "KernelLaunch.h"

#include "fastnn/runtime/LastError.h"

#include <string>

namespace fastnn::cuda {
namespace {

constexpr int Threads = 256;

/// Adam's beta powers advance once per update, on one thread, before the
/// elements read the step size.
__global__ void advanceAdam(OptimizerHyperparameters H, OptimizerState *State,
                            const float *LearningRate, const int64_t *Step,
                            const unsigned char *Apply) {
  if (optimizerApplies(Apply))
    beginOptimizerUpdate(H, *State, *LearningRate, *Step);
}

template <typename GradT>
__global__ void update(OptimizerHyperparameters H, const OptimizerState *State,
                       float *Var, const GradT *G, float *S0, float *S1,
                       const float *LearningRate, const unsigned char *Apply) {
  if (!optimizerApplies(Apply))
    return;
  const float Lr = *LearningRate;
  const float Alpha = H.Kind == FNN_OPT_ADAM ? State->AdamAlpha : 0.f;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < H.NumElements; I += int64_t(gridDim.x) * blockDim.x)
    optimizerUpdate(H, I, Var, toFloat(G[I]), S0, S1, Lr, Alpha);
}

} // namespace

void launchOptimizer(const OptimizerHyperparameters &H, OptimizerState *State,
                     float *Var, const void *G, float *S0, float *S1,
                     const float *LearningRate, const int64_t *Step,
                     const unsigned char *Apply, cudaStream_t Stream) {
  if (H.Kind == FNN_OPT_ADAM)
    advanceAdam<<<1, 1, 0, Stream>>>(H, State, LearningRate, Step, Apply);
  int64_t Blocks = (H.NumElements + Threads - 1) / Threads;
  if (Blocks > 65536)
    Blocks = 65536;
  withElementType(H.GradType, [&](auto Element) {
    using GradT = typename decltype(Element)::Type;
    update<<<static_cast<unsigned>(Blocks), Threads, 0, Stream>>>(
        H, State, Var, static_cast<const GradT *>(G), S0, S1, LearningRate,
        Apply);
  });
  cudaError_t E = cudaGetLastError();
  if (E != cudaSuccess)
    runtime::setLastError(std::string("fnn_optimizer_apply: launch: ") +
                          cudaGetErrorString(E));
}

} // namespace fastnn::cuda
