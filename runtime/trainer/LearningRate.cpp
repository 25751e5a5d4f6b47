//===- LearningRate.cpp - TF-slim and FastNN learning-rate schedules ------===//
//
// With g = step - 1 (TensorFlow's global_step during the update) and lr the
// learning_rate key:
//
// Warm-up (FastNN optimizer_utils._get_learning_rate_warmup, itself
// tensorflow/nmt's; "t2t" after Tensor2Tensor), W = warmup_steps:
//   warm(g) = lr * exp(log(0.01) / W) ^ (W - g)   for g < W
//           = lr                                  otherwise
// so the first step trains at lr / 100.
//
// Decay of the warmed-up rate (TF-slim train_image_classifier.
// _configure_learning_rate), D = int(num_sample_per_epoch * 2.0 /
// batch_size):
//   fixed:        lr (TF-slim returns the constant; warm-up still applies)
//   exponential:  warm(g) * factor ^ floor(g / D)
//                 (tf.train.exponential_decay, staircase=True)
//   polynomial:   (warm(g) - end) * (1 - min(g, D) / D) ^ 1.0 + end
//                 (tf.train.polynomial_decay, power=1.0, cycle=False)
//
// Decay schemes (tensorflow/nmt model.py _get_decay_info, as FastNN adopted
// them), T = the run's steps: start S = int(T * 2 / 3) for luong234 (4
// halvings), int(T / 2) for luong5 and luong10 (5, 10 halvings); D' =
// int((T - S) / halvings);
//   warm(g)                              for g < S
//   warm(g) * 0.5 ^ floor((g - S) / D')  otherwise.
// nmt halves (factor 0.5) as the scheme's definition says; FastNN's port
// passed learning_rate_decay_factor instead, which makes the names wrong.
// D' is at least 1 so that runs shorter than the halvings stay finite (TF
// would divide by zero).
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/LearningRate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fastnn::trainer {
namespace {

int64_t halvings(DecayScheme Scheme) {
  switch (Scheme) {
  case DecayScheme::Luong234:
    return 4;
  case DecayScheme::Luong5:
    return 5;
  case DecayScheme::Luong10:
    return 10;
  case DecayScheme::None:
    break;
  }
  return 0;
}

const char *schemeName(DecayScheme Scheme) {
  switch (Scheme) {
  case DecayScheme::Luong234:
    return "luong234";
  case DecayScheme::Luong5:
    return "luong5";
  case DecayScheme::Luong10:
    return "luong10";
  case DecayScheme::None:
    break;
  }
  return "none";
}

std::string number(double Value) {
  char Text[32];
  std::snprintf(Text, sizeof(Text), "%g", Value);
  return Text;
}

} // namespace

LearningRateSchedule::LearningRateSchedule(const LearningRateOptions &Options)
    : Opts(Options) {
  Opts.DecaySteps = std::max<int64_t>(1, Opts.DecaySteps);
  if (Opts.Scheme == DecayScheme::None)
    return;
  // Python's int() of a positive float truncates, as integer division does.
  StartDecayStep = Opts.Scheme == DecayScheme::Luong234
                       ? Opts.TrainSteps * 2 / 3
                       : Opts.TrainSteps / 2;
  SchemeDecaySteps = std::max<int64_t>(1, (Opts.TrainSteps - StartDecayStep) /
                                              halvings(Opts.Scheme));
}

Status LearningRateSchedule::fromHparams(const Hparams &H,
                                         int64_t SamplesPerEpoch,
                                         int64_t TrainSteps,
                                         LearningRateOptions &Out) {
  Out = LearningRateOptions();
  Out.LearningRate = H.getFloat("learning_rate");
  Out.EndLearningRate = H.getFloat("end_learning_rate");
  Out.DecayFactor = H.getFloat("learning_rate_decay_factor");
  Out.TrainSteps = TrainSteps;
  if (H.getString("warmup_scheme") == "t2t")
    Out.WarmupSteps = H.getInt("warmup_steps");
  const std::string &Scheme = H.getString("decay_scheme");
  Out.Scheme = Scheme == "luong234"  ? DecayScheme::Luong234
               : Scheme == "luong5"  ? DecayScheme::Luong5
               : Scheme == "luong10" ? DecayScheme::Luong10
                                     : DecayScheme::None;
  const std::string &Type = H.getString("learning_rate_decay_type");
  Out.Type = Type == "fixed"        ? DecayType::Fixed
             : Type == "polynomial" ? DecayType::Polynomial
                                    : DecayType::Exponential;
  if (Out.Type == DecayType::Fixed || Out.Scheme != DecayScheme::None)
    return Status::success();

  int64_t Samples = H.isSet("num_sample_per_epoch")
                        ? H.getInt("num_sample_per_epoch")
                        : SamplesPerEpoch;
  if (Samples <= 0)
    return Status::error(
        H.origin("learning_rate_decay_type") +
        ": learning_rate_decay_type: " + Type +
        " decay needs num_sample_per_epoch (decay steps = "
        "num_sample_per_epoch * 2 / batch_size), and the input does not "
        "know its epoch size");
  int64_t BatchSize = H.getInt("batch_size");
  Out.DecaySteps = static_cast<int64_t>(static_cast<double>(Samples) *
                                        NumEpochsPerDecay / BatchSize);
  if (Out.DecaySteps < 1)
    return Status::error(H.origin("num_sample_per_epoch") +
                         ": num_sample_per_epoch: " + std::to_string(Samples) +
                         " samples per epoch make " + Type +
                         " decay steps int(" + std::to_string(Samples) +
                         " * 2 / batch_size " + std::to_string(BatchSize) +
                         ") = 0; an epoch must hold at least half "
                         "a batch");
  return Status::success();
}

double LearningRateSchedule::at(int64_t Step) const {
  const double G = static_cast<double>(Step - 1);
  double Rate = Opts.LearningRate;
  if (Opts.WarmupSteps > 0 && G < Opts.WarmupSteps) {
    double W = static_cast<double>(Opts.WarmupSteps);
    Rate *= std::pow(std::exp(std::log(0.01) / W), W - G);
  }
  switch (Opts.Type) {
  case DecayType::Fixed:
    return Rate;
  case DecayType::Exponential:
    if (Opts.Scheme != DecayScheme::None) {
      if (Step - 1 < StartDecayStep)
        return Rate;
      return Rate *
             std::pow(0.5, std::floor((G - StartDecayStep) / SchemeDecaySteps));
    }
    return Rate * std::pow(Opts.DecayFactor, std::floor(G / Opts.DecaySteps));
  case DecayType::Polynomial: {
    double D = static_cast<double>(Opts.DecaySteps);
    return (Rate - Opts.EndLearningRate) * (1.0 - std::min(G, D) / D) +
           Opts.EndLearningRate;
  }
  }
  return Rate;
}

std::string LearningRateSchedule::describe() const {
  std::string Text = "learning rate " + number(Opts.LearningRate);
  if (Opts.WarmupSteps > 0)
    Text += ", t2t warm-up over " + std::to_string(Opts.WarmupSteps) + " steps";
  switch (Opts.Type) {
  case DecayType::Fixed:
    return Text + ", fixed";
  case DecayType::Exponential:
    if (Opts.Scheme != DecayScheme::None)
      return Text + ", " + schemeName(Opts.Scheme) + ": halved every " +
             std::to_string(SchemeDecaySteps) + " steps from step " +
             std::to_string(StartDecayStep + 1);
    return Text + ", exponential decay by " + number(Opts.DecayFactor) +
           " every " + std::to_string(Opts.DecaySteps) + " steps";
  case DecayType::Polynomial:
    return Text + ", polynomial decay to " + number(Opts.EndLearningRate) +
           " over " + std::to_string(Opts.DecaySteps) + " steps";
  }
  return Text;
}

} // namespace fastnn::trainer
