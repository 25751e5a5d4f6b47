//===- OptimizerMath.h - the optimizers' per-element updates ----*- C++ -*-===//
//
// TensorFlow 1.x tf.train updates, one element at a time, in the order and
// float32 arithmetic of the CPU kernels (runtime/kernels/cpu/Optimizers.cpp,
// itself TF's training_ops.cc), so that a CUDA step and a CPU step give the
// same bits. The CUDA kernels (Optimizers.cu) call these per element; the
// host tests (test/runtime/kernels/cuda) call them on the host and compare
// with fastnn_runtime_cpu.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_OPTIMIZERMATH_H
#define FASTNN_RUNTIME_CUDA_OPTIMIZERMATH_H

#include "HostDevice.h"

#include "fastnn/runtime/Optimizer.h"
#include "fastnn/runtime/abi.h"

namespace fastnn::cuda {

/// The hyperparameters rounded to float32 as on the CPU.
using runtime::OptimizerHyperparameters;
using runtime::optimizerHyperparameters;

/// Adam's beta1^t and beta2^t as TF keeps them: float32 variables that start
/// at 1 and are multiplied by beta after every update (a product of rounded
/// products, which differs from powf(beta, t) by enough to move
/// 1 - beta2^t in the first steps). Advanced to the step asked for, and
/// recomputed from 1 when the step goes backwards (a restart).
struct AdamPowers {
  int64_t Step;
  float Beta1Power, Beta2Power;
};

FNN_HOST_DEVICE inline void advanceAdamPowers(AdamPowers &P, float Beta1,
                                              float Beta2, int64_t Step) {
  if (Step < P.Step) {
    P.Step = 0;
    P.Beta1Power = P.Beta2Power = 1.f;
  }
  for (; P.Step < Step; ++P.Step) {
    P.Beta1Power *= Beta1;
    P.Beta2Power *= Beta2;
  }
}

/// TF's Adam puts the bias correction into the step size.
FNN_HOST_DEVICE inline float adamStepSize(float Lr, const AdamPowers &P) {
  return Lr * fnnSqrt(1.f - P.Beta2Power) / (1.f - P.Beta1Power);
}

/// Device-resident state of one optimizer kernel: Adam's powers and this
/// update's step size.
struct OptimizerState {
  AdamPowers Powers;
  float AdamAlpha;
};

/// fnn_optimizer_apply_if's flag (NULL: fnn_optimizer_apply, always).
FNN_HOST_DEVICE inline bool optimizerApplies(const unsigned char *Apply) {
  return !Apply || *Apply != 0;
}

/// What one update computes once before its elements (Adam only).
FNN_HOST_DEVICE inline void
beginOptimizerUpdate(const OptimizerHyperparameters &H, OptimizerState &State,
                     float Lr, int64_t Step) {
  if (H.Kind != FNN_OPT_ADAM)
    return;
  advanceAdamPowers(State.Powers, H.Beta1, H.Beta2, Step);
  State.AdamAlpha = adamStepSize(Lr, State.Powers);
}

FNN_HOST_DEVICE inline void sgdUpdate(float &Var, float G, float Lr) {
  Var -= G * Lr;
}

FNN_HOST_DEVICE inline void momentumUpdate(const OptimizerHyperparameters &H,
                                           float &Var, float G, float &Accum,
                                           float Lr) {
  Accum = Accum * H.Momentum + G;
  if (H.Nesterov)
    Var -= G * Lr + Accum * H.Momentum * Lr;
  else
    Var -= Accum * Lr;
}

/// `decay` is rho, epsilon sits inside the sqrt, and the momentum
/// accumulator holds the scaled step.
FNN_HOST_DEVICE inline void rmspropUpdate(const OptimizerHyperparameters &H,
                                          float &Var, float G, float &Ms,
                                          float &Mom, float Lr) {
  Ms += (G * G - Ms) * (1.f - H.Decay);
  Mom = Mom * H.Momentum + (G * Lr) / fnnSqrt(Ms + H.Epsilon);
  Var -= Mom;
}

/// \p Alpha is adamStepSize's; epsilon is added to the uncorrected sqrt(v).
FNN_HOST_DEVICE inline void adamUpdate(const OptimizerHyperparameters &H,
                                       float &Var, float G, float &M, float &V,
                                       float Alpha) {
  M += (G - M) * (1.f - H.Beta1);
  V += (G * G - V) * (1.f - H.Beta2);
  Var -= (M * Alpha) / (fnnSqrt(V) + H.Epsilon);
}

/// TF 1.x's ApplyAdagrad has no epsilon.
FNN_HOST_DEVICE inline void adagradUpdate(float &Var, float G, float &Accum,
                                          float Lr) {
  Accum += G * G;
  Var -= G * Lr * (1.f / fnnSqrt(Accum));
}

/// Epsilon inside both square roots; the learning rate scales the update
/// after it is accumulated.
FNN_HOST_DEVICE inline void adadeltaUpdate(const OptimizerHyperparameters &H,
                                           float &Var, float G, float &Accum,
                                           float &AccumUpdate, float Lr) {
  const float OneMinusRho = 1.f - H.Rho;
  Accum = Accum * H.Rho + G * G * OneMinusRho;
  float Update =
      fnnSqrt(AccumUpdate + H.Epsilon) * (1.f / fnnSqrt(Accum + H.Epsilon)) * G;
  Var -= Update * Lr;
  AccumUpdate = AccumUpdate * H.Rho + Update * Update * OneMinusRho;
}

/// FTRL-proximal (TF's ApplyFtrl), learning_rate_power -0.5 as square roots.
FNN_HOST_DEVICE inline void ftrlUpdate(const OptimizerHyperparameters &H,
                                       float &Var, float G, float &Accum,
                                       float &Linear, float Lr) {
  const float P = -H.LearningRatePower;
  const bool Sqrt = H.LearningRatePower == -0.5f;
  float NewAccum = Accum + G * G;
  float NewPower = Sqrt ? fnnSqrt(NewAccum) : fnnPow(NewAccum, P);
  float OldPower = Sqrt ? fnnSqrt(Accum) : fnnPow(Accum, P);
  Linear += G - (NewPower - OldPower) / Lr * Var;
  float Sign = Linear > 0.f ? 1.f : Linear < 0.f ? -1.f : 0.f;
  float PreShrink = (H.L1 * Sign - Linear) / (NewPower / Lr + 2.f * H.L2);
  Var = fnnAbs(Linear) > H.L1 ? PreShrink : 0.f;
  Accum = NewAccum;
}

/// BERT's AdamWeightDecayOptimizer: no bias correction, decay added to the
/// update.
FNN_HOST_DEVICE inline void adamwUpdate(const OptimizerHyperparameters &H,
                                        float &Var, float G, float &M, float &V,
                                        float Lr) {
  M = H.Beta1 * M + (1.f - H.Beta1) * G;
  V = H.Beta2 * V + (1.f - H.Beta2) * (G * G);
  float Update = M / (fnnSqrt(V) + H.Epsilon) + H.WeightDecayRate * Var;
  Var -= Lr * Update;
}

/// Element \p I of one update of any kind, whose gradient is \p G (read
/// and widened by the caller). \p AdamAlpha is read by Adam only.
FNN_HOST_DEVICE inline void optimizerUpdate(const OptimizerHyperparameters &H,
                                            int64_t I, float *Var, float G,
                                            float *S0, float *S1, float Lr,
                                            float AdamAlpha) {
  switch (H.Kind) {
  case FNN_OPT_SGD:
    sgdUpdate(Var[I], G, Lr);
    break;
  case FNN_OPT_MOMENTUM:
    momentumUpdate(H, Var[I], G, S0[I], Lr);
    break;
  case FNN_OPT_RMSPROP:
    rmspropUpdate(H, Var[I], G, S0[I], S1[I], Lr);
    break;
  case FNN_OPT_ADAM:
    adamUpdate(H, Var[I], G, S0[I], S1[I], AdamAlpha);
    break;
  case FNN_OPT_ADAGRAD:
    adagradUpdate(Var[I], G, S0[I], Lr);
    break;
  case FNN_OPT_ADADELTA:
    adadeltaUpdate(H, Var[I], G, S0[I], S1[I], Lr);
    break;
  case FNN_OPT_FTRL:
    ftrlUpdate(H, Var[I], G, S0[I], S1[I], Lr);
    break;
  case FNN_OPT_ADAMW:
    adamwUpdate(H, Var[I], G, S0[I], S1[I], Lr);
    break;
  }
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_OPTIMIZERMATH_H
