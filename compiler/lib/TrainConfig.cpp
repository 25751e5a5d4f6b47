//===- TrainConfig.cpp - hyperparameters -> training compilation ----------===//

#include "fastnn/Compiler/TrainConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

namespace fastnn {

FastNNBuildTrainStepOptions trainStepOptions(const trainer::Hparams &hparams) {
  FastNNBuildTrainStepOptions options;
  options.optimizer = hparams.getString("optimizer");
  options.weightDecay = hparams.getFloat("weight_decay");
  if (hparams.isSet("max_gradient_norm"))
    options.maxGradientNorm = hparams.getFloat("max_gradient_norm");
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
  return options;
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
