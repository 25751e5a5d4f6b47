//===- TrainConfig.cpp - hyperparameters -> training compilation ----------===//

#include "fastnn/Compiler/TrainConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

namespace fastnn {

trainer::Status setPipelineOptions(const trainer::Hparams &hparams,
                                   PipelineOptions &options) {
  // The hyperparameter table admits the same spellings as the options.
  std::optional<Precision> precision = parseOptionValue<Precision>(
      precisionValues(), hparams.getString("precision"));
  std::optional<mlir::fastnn::Optimizer> optimizer =
      mlir::fastnn::symbolizeOptimizer(hparams.getString("optimizer"));
  for (auto [key, known] : {std::pair{"precision", precision.has_value()},
                            std::pair{"optimizer", optimizer.has_value()}})
    if (!known)
      return trainer::Status::error(hparams.origin(key) + ": " + key + "=" +
                                    hparams.text(key) +
                                    " is not a value fastnnc compiles");
  options.precision = *precision;
  options.optimizer = *optimizer;
  options.weightDecay = hparams.getFloat("weight_decay");
  options.momentum = hparams.getFloat("momentum");
  options.rmspropMomentum = hparams.getFloat("rmsprop_momentum");
  options.rmspropDecay = hparams.getFloat("rmsprop_decay");
  options.adamBeta1 = hparams.getFloat("adam_beta1");
  options.adamBeta2 = hparams.getFloat("adam_beta2");
  options.optEpsilon = hparams.getFloat("opt_epsilon");
  options.adadeltaRho = hparams.getFloat("adadelta_rho");
  options.adagradInitialAccumulatorValue =
      hparams.getFloat("adagrad_initial_accumulator_value");
  options.ftrlLearningRatePower = hparams.getFloat("ftrl_learning_rate_power");
  options.ftrlInitialAccumulatorValue =
      hparams.getFloat("ftrl_initial_accumulator_value");
  options.ftrlL1 = hparams.getFloat("ftrl_l1");
  options.ftrlL2 = hparams.getFloat("ftrl_l2");
  if (hparams.isSet("seed"))
    options.dropoutSeed = hparams.getInt("seed");
  options.lossScale = hparams.getFloat("loss_scale");
  options.dynamicLossScale = hparams.getBool("dynamic_loss_scale");
  if (hparams.isSet("max_gradient_norm"))
    options.maxGradientNorm = hparams.getFloat("max_gradient_norm");
  options.iterationsPerLoop = hparams.getInt("iterations_per_loop");
  options.allreduceBucketBytes = hparams.getInt("allreduce_bucket_bytes");
  if (hparams.isSet("memory_budget_mb"))
    options.memoryBudgetMb = hparams.getInt("memory_budget_mb");
  return trainer::Status::success();
}

trainer::Status resolvePrecision(trainer::Hparams &hparams) {
  bool halfGiven = hparams.isGiven("use_fp16");
  bool half = hparams.getBool("use_fp16");
  std::string precision;
  if (hparams.isGiven("precision")) {
    precision = hparams.getString("precision");
    if (halfGiven && half != (precision != "fp32"))
      return trainer::Status::error(hparams.origin("use_fp16") +
                                    ": use_fp16=" + hparams.text("use_fp16") +
                                    " contradicts precision=" + precision +
                                    " (" + hparams.origin("precision") +
                                    "); give one of them");
  } else {
    // FastNN's default use_fp16=True is not a request: only a given True
    // switches precision, so configurations that never mention it keep
    // training in fp32.
    precision = halfGiven && half ? "fp16" : "fp32";
  }
  bool dynamic = hparams.isGiven("dynamic_loss_scale")
                     ? hparams.getBool("dynamic_loss_scale")
                     : precision == "fp16" && !hparams.isGiven("loss_scale");
  std::string resolved =
      "precision=" + precision +
      "\nuse_fp16=" + (precision == "fp32" ? "False" : "True") +
      "\ndynamic_loss_scale=" + (dynamic ? "True" : "False") + "\n";
  // TensorFlow's and PyTorch's initial dynamic scale.
  if (dynamic && !hparams.isGiven("loss_scale"))
    resolved += "loss_scale=32768\n";
  return hparams.parseText(resolved, "fastnnc (resolved)");
}

mlir::LogicalResult checkNumClasses(mlir::ModuleOp module,
                                    const trainer::Hparams &hparams) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward || forward.getNumResults() == 0 ||
      !hparams.isGiven("num_classes"))
    return mlir::success();
  auto logits =
      mlir::dyn_cast<mlir::RankedTensorType>(forward.getResultTypes()[0]);
  int64_t wanted = hparams.getInt("num_classes");
  if (logits && logits.getRank() >= 2 && logits.getDimSize(1) != wanted)
    return mlir::emitError(module.getLoc())
           << "the model has " << logits.getDimSize(1)
           << " classes but num_classes=" << wanted << " ("
           << hparams.origin("num_classes")
           << "); export the model with --num-classes " << wanted;
  return mlir::success();
}

} // namespace fastnn
