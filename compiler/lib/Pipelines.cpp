//===- Pipelines.cpp - the registered fastnn pass pipelines ---------------===//

#include "fastnn/Compiler/Pipelines.h"

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Target/ObjectEmitter.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace fastnn {

void buildCPUForwardPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The kernels' layouts, before the steps are built from the graph (their
  // gradient ops inherit them). Inputs keep their writer's layout:
  // infer.bin's are the user's .npy files, train.bin's loader writes NCHW
  // and the step transposes it to the kernels' layout.
  FastNNLayoutOptions layout;
  layout.target = Target::CPU;
  layout.precision = options.precision;
  layout.layout = options.layout;
  layout.inputLayout =
      options.mode == StepKind::Infer ? InputLayout::Model : InputLayout::Reads;
  pm.addPass(createFastNNLayout(layout));
  pm.addPass(createCanonicalizerPass());
}

void buildTrainStepPipeline(OpPassManager &pm, const PipelineOptions &options) {
  FastNNBuildTrainStepOptions step;
  step.optimizer = options.optimizer;
  step.weightDecay = options.weightDecay;
  step.dropoutSeed = options.dropoutSeed;
  step.momentum = options.momentum;
  step.rmspropMomentum = options.rmspropMomentum;
  step.rmspropDecay = options.rmspropDecay;
  step.adamBeta1 = options.adamBeta1;
  step.adamBeta2 = options.adamBeta2;
  step.optEpsilon = options.optEpsilon;
  step.adadeltaRho = options.adadeltaRho;
  step.adagradInitialAccumulatorValue = options.adagradInitialAccumulatorValue;
  step.ftrlLearningRatePower = options.ftrlLearningRatePower;
  step.ftrlInitialAccumulatorValue = options.ftrlInitialAccumulatorValue;
  step.ftrlL1 = options.ftrlL1;
  step.ftrlL2 = options.ftrlL2;
  step.lossScale = options.lossScale;
  step.dynamicLossScale = options.dynamicLossScale;
  pm.addPass(createFastNNBuildTrainStep(step));
  // Gradients and metrics are averaged over the workers of a data-parallel
  // job (the identity in a single process), in buckets fused after cleanup
  // so that they follow the final order of the backward pass.
  pm.addPass(createFastNNDataParallel());
  FastNNClipGradientsOptions clip;
  clip.maxNorm = options.maxGradientNorm;
  pm.addPass(createFastNNClipGradients(clip));
  pm.addPass(createFastNNDynamicLossScale());
  FastNNMixedPrecisionOptions mixed;
  mixed.precision = options.precision;
  pm.addPass(createFastNNMixedPrecision(mixed));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After cleanup, which would hoist the step's constants out of the loop.
  FastNNSinkLoopOptions sink;
  sink.iterations = options.iterationsPerLoop;
  pm.addPass(createFastNNSinkLoop(sink));
  FastNNFuseAllReduceOptions buckets;
  buckets.bucketBytes = options.allreduceBucketBytes;
  pm.addPass(createFastNNFuseAllReduce(buckets));
}

void buildEvalStepPipeline(OpPassManager &pm) {
  pm.addPass(createFastNNBuildEvalStep());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildCPULoweringPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  // The CPU's fusion: oneDNN's post-ops and bias, elementwise chains in one
  // loop nest, and reductions of up to 4096 elements per output as loops
  // (oneDNN 2.6 runs some of those on its reference implementation).
  FastNNPlanFusionOptions fusion;
  fusion.maxLoopReduction = 4096;
  pm.addPass(createFastNNPlanFusion(fusion));
  // Target-neutral: kernel calls through abi.h, collectives, the arena plan
  // and the model's metadata. The evaluation step's parameters are the
  // training arena's, copied in by the trainer, so their initial values are
  // not embedded a second time.
  FastNNLowerToRuntimeOptions lowering;
  lowering.entryName = options.mode == StepKind::Train  ? "train_step"
                       : options.mode == StepKind::Eval ? "eval_step"
                                                        : "forward";
  lowering.symbolPrefix = !options.symbolPrefix.empty()
                              ? options.symbolPrefix.getValue()
                          : options.mode == StepKind::Eval ? "fnn_eval"
                                                           : "fnn_model";
  lowering.initializeState = options.mode != StepKind::Eval;
  pm.addPass(createFastNNLowerToRuntime(lowering));
  // The CPU part: loop nests outlined and run through fnn_parallel_for,
  // everything in the LLVM dialect.
  buildLowerToLLVMDialectPipeline(pm);
  pm.addPass(createFastNNVerifyCPULowered());
}

void buildCPUPipeline(OpPassManager &pm, const PipelineOptions &options) {
  buildCPUForwardPipeline(pm, options);
  if (options.mode == StepKind::Train)
    buildTrainStepPipeline(pm, options);
  else if (options.mode == StepKind::Eval)
    buildEvalStepPipeline(pm);
  buildCPULoweringPipeline(pm, options);
}

void registerPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cpu",
      "The whole CPU compile of an imported model (what fastnnc runs): "
      "fastnn-cpu-forward, the step of `mode`, fastnn-cpu-lowering",
      buildCPUPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cpu-forward",
      "Canonicalize the imported graph and give it the CPU kernels' layouts",
      buildCPUForwardPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-train-step",
      "Build the training step: loss, gradients, allreduce, clipping, loss "
      "scaling, mixed precision, loop sinking, allreduce buckets",
      buildTrainStepPipeline);
  PassPipelineRegistration<>("fastnn-eval-step",
                             "Build the evaluation step and clean it up",
                             buildEvalStepPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cpu-lowering",
      "Lower the step of `mode` to the runtime ABI and the LLVM dialect for "
      "the CPU, and check the result",
      buildCPULoweringPipeline);
}

} // namespace fastnn
