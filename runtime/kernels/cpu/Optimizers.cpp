//===- Optimizers.cpp - fnn_optimizer: TensorFlow 1.x tf.train updates ----===//
//
// Each update is the arithmetic of TensorFlow's CPU training op (ApplyMomentum,
// ApplyRMSProp, ApplyAdam, ... in tensorflow/core/kernels/training_ops.cc),
// written in the same order and in float32 like TF's float32 variables, so
// that the result agrees with tf.compat.v1.train to a few ulps rather than
// only mathematically. Hyperparameters are rounded to float32 at create time
// for the same reason: TF feeds them to the op as float32 tensors.
//
// A bfloat16 gradient (a mixed-precision step's) is widened as it is read:
// exactly, so the update is the one its float32 widening would get.
//
// The loops are plain and single-threaded: the updates are memory-bound and
// run once per parameter per step; even vgg's 100M-element fc6 takes a small
// fraction of that model's step. This file is compiled with -fno-math-errno
// so that clang vectorises the sqrt calls.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "fastnn/runtime/DTypes.h"

#include <cmath>
#include <cstring>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {

/// The desc's hyperparameters, and the state the updates carry between
/// calls.
struct Hyperparameters : fastnn::runtime::OptimizerHyperparameters {
  /// Adam's beta1^t and beta2^t as TF has them: float32 variables that start
  /// at 1 and are multiplied by beta after every update, so each is a
  /// product of rounded products. Rounding them differently moves
  /// 1 - beta2^t, which is small in the first steps, by up to 1e-4
  /// relative. Kept for step PowersStep and advanced to the step asked for
  /// (recomputed from 1 when the step goes backwards, e.g. a restart).
  int64_t PowersStep;
  float Beta1Power, Beta2Power;
};

/// The kernel keeps its hyperparameters in a kernel-owned buffer bound to
/// operand 0: fnn_kernel has no other place for state that is not a oneDNN
/// primitive, and the apply call reads it back through the operand.
enum Slot { HyperparametersSlot };

void build(CpuKernel &K, const fnn_optimizer_desc &D) {
  fastnn::runtime::checkOptimizerDesc(D);
  Hyperparameters H{fastnn::runtime::optimizerHyperparameters(D), 0, 1.f, 1.f};
  memory::desc Bytes({static_cast<memory::dim>(sizeof(H))},
                     memory::data_type::u8, memory::format_tag::a);
  memory State = K.addInternal(Bytes);
  std::memcpy(State.get_data_handle(), &H, sizeof(H));
  K.addOperand(Bytes);
  K.bind(HyperparametersSlot, State.get_data_handle());
}

// The updates. Var, G and the slots never alias (distinct arena tensors), so
// __restrict lets clang vectorise without runtime overlap checks. G is
// float32 or bfloat16 bits (GradT float or uint16_t), widened as read.

float widen(float G) { return G; }
float widen(uint16_t G) { return fastnn::runtime::bfloat16ToFloat(G); }

template <typename GradT>
void sgd(int64_t N, float *__restrict Var, const GradT *__restrict G,
         float Lr) {
  for (int64_t I = 0; I < N; ++I)
    Var[I] -= widen(G[I]) * Lr;
}

template <typename GradT>
void momentum(const Hyperparameters &H, float *__restrict Var,
              const GradT *__restrict G, float *__restrict Accum, float Lr) {
  const float M = H.Momentum;
  if (H.Nesterov) {
    for (int64_t I = 0; I < H.NumElements; ++I) {
      Accum[I] = Accum[I] * M + widen(G[I]);
      Var[I] -= widen(G[I]) * Lr + Accum[I] * M * Lr;
    }
  } else {
    for (int64_t I = 0; I < H.NumElements; ++I) {
      Accum[I] = Accum[I] * M + widen(G[I]);
      Var[I] -= Accum[I] * Lr;
    }
  }
}

/// TF's RMSProp: `decay` is rho, epsilon sits inside the sqrt, and the
/// momentum accumulator already holds the scaled step.
template <typename GradT>
void rmsprop(const Hyperparameters &H, float *__restrict Var,
             const GradT *__restrict G, float *__restrict Ms,
             float *__restrict Mom, float Lr) {
  const float OneMinusRho = 1.f - H.Decay, M = H.Momentum, Eps = H.Epsilon;
  for (int64_t I = 0; I < H.NumElements; ++I) {
    Ms[I] += (widen(G[I]) * widen(G[I]) - Ms[I]) * OneMinusRho;
    Mom[I] = Mom[I] * M + (widen(G[I]) * Lr) / std::sqrt(Ms[I] + Eps);
    Var[I] -= Mom[I];
  }
}

/// TF's Adam: the bias correction goes into the step size, epsilon is added
/// to the uncorrected sqrt(v).
template <typename GradT>
void adam(Hyperparameters &H, float *__restrict Var, const GradT *__restrict G,
          float *__restrict Mv, float *__restrict V, float Lr, int64_t Step) {
  if (Step < H.PowersStep) {
    H.PowersStep = 0;
    H.Beta1Power = H.Beta2Power = 1.f;
  }
  for (; H.PowersStep < Step; ++H.PowersStep) {
    H.Beta1Power *= H.Beta1;
    H.Beta2Power *= H.Beta2;
  }
  const float Alpha = Lr * std::sqrt(1.f - H.Beta2Power) / (1.f - H.Beta1Power);
  const float OneMinusBeta1 = 1.f - H.Beta1, OneMinusBeta2 = 1.f - H.Beta2;
  const float Eps = H.Epsilon;
  for (int64_t I = 0; I < H.NumElements; ++I) {
    Mv[I] += (widen(G[I]) - Mv[I]) * OneMinusBeta1;
    V[I] += (widen(G[I]) * widen(G[I]) - V[I]) * OneMinusBeta2;
    Var[I] -= (Mv[I] * Alpha) / (std::sqrt(V[I]) + Eps);
  }
}

/// TF 1.x's ApplyAdagrad has no epsilon.
template <typename GradT>
void adagrad(const Hyperparameters &H, float *__restrict Var,
             const GradT *__restrict G, float *__restrict Accum, float Lr) {
  for (int64_t I = 0; I < H.NumElements; ++I) {
    Accum[I] += widen(G[I]) * widen(G[I]);
    Var[I] -= widen(G[I]) * Lr * (1.f / std::sqrt(Accum[I]));
  }
}

/// TF's ApplyAdadelta: epsilon inside both square roots, and the learning
/// rate (1.0 in the paper) scales the update after it is accumulated.
template <typename GradT>
void adadelta(const Hyperparameters &H, float *__restrict Var,
              const GradT *__restrict G, float *__restrict Accum,
              float *__restrict AccumUpdate, float Lr) {
  const float Rho = H.Rho, OneMinusRho = 1.f - H.Rho, Eps = H.Epsilon;
  for (int64_t I = 0; I < H.NumElements; ++I) {
    Accum[I] = Accum[I] * Rho + widen(G[I]) * widen(G[I]) * OneMinusRho;
    float Update = std::sqrt(AccumUpdate[I] + Eps) *
                   (1.f / std::sqrt(Accum[I] + Eps)) * widen(G[I]);
    Var[I] -= Update * Lr;
    AccumUpdate[I] = AccumUpdate[I] * Rho + Update * Update * OneMinusRho;
  }
}

/// TF's ApplyFtrl (FTRL-proximal, McMahan et al. 2013), with its special
/// case of learning_rate_power = -0.5 as square roots:
///   accum_new = accum + g^2
///   linear += g - (accum_new^-p - accum^-p) / lr * var
///   var = |linear| > l1 ? (sign(linear) l1 - linear)
///                         / (accum_new^-p / lr + 2 l2) : 0
template <typename GradT>
void ftrl(const Hyperparameters &H, float *__restrict Var,
          const GradT *__restrict G, float *__restrict Accum,
          float *__restrict Linear, float Lr) {
  const float L1 = H.L1, TwoL2 = 2.f * H.L2, P = -H.LearningRatePower;
  const bool Sqrt = H.LearningRatePower == -0.5f;
  for (int64_t I = 0; I < H.NumElements; ++I) {
    float NewAccum = Accum[I] + widen(G[I]) * widen(G[I]);
    float NewPower = Sqrt ? std::sqrt(NewAccum) : std::pow(NewAccum, P);
    float OldPower = Sqrt ? std::sqrt(Accum[I]) : std::pow(Accum[I], P);
    Linear[I] += widen(G[I]) - (NewPower - OldPower) / Lr * Var[I];
    float Sign = Linear[I] > 0.f ? 1.f : Linear[I] < 0.f ? -1.f : 0.f;
    float PreShrink = (L1 * Sign - Linear[I]) / (NewPower / Lr + TwoL2);
    Var[I] = std::abs(Linear[I]) > L1 ? PreShrink : 0.f;
    Accum[I] = NewAccum;
  }
}

/// BERT's AdamWeightDecayOptimizer (optimization.py): Adam moments without
/// bias correction, and the decay added to the update rather than to the
/// gradient, so it bypasses the moments. Which parameters are excluded from
/// decay is the compiler's choice (weight_decay_rate 0 for them).
template <typename GradT>
void adamw(const Hyperparameters &H, float *__restrict Var,
           const GradT *__restrict G, float *__restrict Mv, float *__restrict V,
           float Lr) {
  const float B1 = H.Beta1, B2 = H.Beta2, OneMinusB1 = 1.f - H.Beta1,
              OneMinusB2 = 1.f - H.Beta2, Eps = H.Epsilon,
              Decay = H.WeightDecayRate;
  for (int64_t I = 0; I < H.NumElements; ++I) {
    Mv[I] = B1 * Mv[I] + OneMinusB1 * widen(G[I]);
    V[I] = B2 * V[I] + OneMinusB2 * (widen(G[I]) * widen(G[I]));
    float Update = Mv[I] / (std::sqrt(V[I]) + Eps) + Decay * Var[I];
    Var[I] -= Lr * Update;
  }
}

template <typename GradT>
void update(Hyperparameters &H, float *Var, const GradT *G, void *Slot0,
            void *Slot1, const void *LearningRate, const void *Step) {
  auto *S0 = static_cast<float *>(Slot0);
  auto *S1 = static_cast<float *>(Slot1);
  float Lr = *static_cast<const float *>(LearningRate);
  switch (H.Kind) {
  case FNN_OPT_SGD:
    sgd(H.NumElements, Var, G, Lr);
    break;
  case FNN_OPT_MOMENTUM:
    momentum(H, Var, G, S0, Lr);
    break;
  case FNN_OPT_RMSPROP:
    rmsprop(H, Var, G, S0, S1, Lr);
    break;
  case FNN_OPT_ADAM:
    adam(H, Var, G, S0, S1, Lr, *static_cast<const int64_t *>(Step));
    break;
  case FNN_OPT_ADAGRAD:
    adagrad(H, Var, G, S0, Lr);
    break;
  case FNN_OPT_ADADELTA:
    adadelta(H, Var, G, S0, S1, Lr);
    break;
  case FNN_OPT_FTRL:
    ftrl(H, Var, G, S0, S1, Lr);
    break;
  case FNN_OPT_ADAMW:
    adamw(H, Var, G, S0, S1, Lr);
    break;
  }
}

} // namespace

extern "C" fnn_kernel *fnn_optimizer_create(fnn_device *Device,
                                            const fnn_optimizer_desc *Desc) {
  return createKernel("fnn_optimizer_create", Device, Desc, build,
                      fastnn::runtime::describeOptimizer);
}

extern "C" void fnn_optimizer_apply(fnn_kernel *Handle, void *Param,
                                    const void *Grad, void *Slot0, void *Slot1,
                                    const void *LearningRate,
                                    const void *Step) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  void *State = nullptr;
  dnnl_memory_get_data_handle(Kernel->operand(HyperparametersSlot).get(),
                              &State);
  Hyperparameters &H = *static_cast<Hyperparameters *>(State);
  int Slots = fastnn::runtime::optimizerSlotCount(H.Kind);
  if (!Param || !Grad || !LearningRate || (Slots > 0 && !Slot0) ||
      (Slots > 1 && !Slot1) || (H.Kind == FNN_OPT_ADAM && !Step)) {
    setLastError(std::string("fnn_optimizer_apply: ") +
                 fastnn::runtime::optimizerKindName(H.Kind) +
                 " called with a null tensor");
    return;
  }
  if (H.GradType == FNN_BF16)
    update(H, static_cast<float *>(Param), static_cast<const uint16_t *>(Grad),
           Slot0, Slot1, LearningRate, Step);
  else
    update(H, static_cast<float *>(Param), static_cast<const float *>(Grad),
           Slot0, Slot1, LearningRate, Step);
}

extern "C" void fnn_optimizer_apply_if(fnn_kernel *Kernel, void *Param,
                                       const void *Grad, void *Slot0,
                                       void *Slot1, const void *LearningRate,
                                       const void *Step, const void *Apply) {
  if (*static_cast<const unsigned char *>(Apply))
    fnn_optimizer_apply(Kernel, Param, Grad, Slot0, Slot1, LearningRate, Step);
}
