//===- LearningRate.h - The learning rate of each training step -*- C++ -*-===//
//
// TF-slim's train_image_classifier._configure_learning_rate (fixed,
// exponential, polynomial) with PAI FastNN's warm-up and decay schemes (t2t
// warm-up; luong234/luong5/luong10 from tensorflow/nmt). docs/
// hyperparameters.md gives the formulas; LearningRate.cpp cites the sources.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_LEARNINGRATE_H
#define FASTNN_TRAINER_LEARNINGRATE_H

#include "fastnn/trainer/Hparams.h"

#include <cstdint>
#include <string>

namespace fastnn::trainer {

enum class DecayType { Fixed, Exponential, Polynomial };
enum class DecayScheme { None, Luong234, Luong5, Luong10 };

struct LearningRateOptions {
  double LearningRate = 0.01;
  double EndLearningRate = 0.0001;
  double DecayFactor = 0.94;
  DecayType Type = DecayType::Exponential;
  /// Steps per exponential decay and length of the polynomial decay (TF-slim:
  /// num_samples_per_epoch * num_epochs_per_decay / batch_size). Ignored
  /// with a decay scheme, which sets its own.
  int64_t DecaySteps = 1;
  /// t2t warm-up over this many steps; 0: none.
  int64_t WarmupSteps = 0;
  DecayScheme Scheme = DecayScheme::None;
  /// Steps of the whole run; the luong schemes decay over its tail.
  int64_t TrainSteps = 1;
};

class LearningRateSchedule {
public:
  explicit LearningRateSchedule(const LearningRateOptions &Options);

  /// The options from the hyperparameters. SamplesPerEpoch is the data
  /// source's epoch when num_sample_per_epoch is unset (0: unknown, an error
  /// for the exponential and polynomial types, which need it). TrainSteps is
  /// the number of steps the run will make.
  static Status fromHparams(const Hparams &H, int64_t SamplesPerEpoch,
                            int64_t TrainSteps, LearningRateOptions &Out);

  /// The rate of training step Step (1-based, as the compiled step counts);
  /// it equals what TensorFlow computes at global_step = Step - 1, the value
  /// global_step has while the Step-th update runs.
  double at(int64_t Step) const;

  /// One line for the log: type, decay steps, warm-up, scheme.
  std::string describe() const;

  /// TF-slim decays every 2 epochs.
  static constexpr double NumEpochsPerDecay = 2.0;

private:
  LearningRateOptions Opts;
  int64_t StartDecayStep = 0, SchemeDecaySteps = 1;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_LEARNINGRATE_H
