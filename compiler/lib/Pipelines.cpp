//===- Pipelines.cpp - the registered fastnn pass pipelines ---------------===//

#include "fastnn/Compiler/Pipelines.h"

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Target/ObjectEmitter.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace fastnn {

namespace {

void addForwardPasses(OpPassManager &pm, const PipelineOptions &options,
                      Target target) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // After cleanup, which folds the comparisons' constants.
  pm.addPass(createFastNNRandomMasks());
  // An inference model's batch norms have fixed statistics: they fold into
  // the convolutions before them.
  if (options.mode == StepKind::Infer)
    pm.addPass(createFastNNFoldBatchNorm());
  // The kernels' layouts, before the steps are built from the graph (their
  // gradient ops inherit them). Inputs keep their writer's layout:
  // infer.bin's are the user's .npy files, train.bin's loader writes NCHW
  // and the step transposes it to the kernels' layout.
  FastNNLayoutOptions layout;
  layout.target = target;
  layout.precision = options.precision;
  layout.layout = options.layout;
  layout.inputLayout =
      options.mode == StepKind::Infer ? InputLayout::Model : InputLayout::Reads;
  pm.addPass(createFastNNLayout(layout));
  pm.addPass(createCanonicalizerPass());
}

/// The target-neutral lowering to the runtime ABI, after `target`'s fusion
/// plan: kernel calls, collectives, the arena plan and the model's
/// metadata. The evaluation step's parameters are the training arena's,
/// copied in by the trainer, so their initial values are not embedded a
/// second time.
void buildRuntimeLoweringPipeline(OpPassManager &pm,
                                  const PipelineOptions &options,
                                  int64_t maxLoopReduction) {
  pm.addPass(createFastNNKernelTypes());
  // Before the fusion plan, which sees the recomputations like other ops.
  if (options.mode == StepKind::Train && options.memoryBudgetMb > 0) {
    FastNNRematerializeOptions budget;
    budget.budgetBytes = options.memoryBudgetMb * (int64_t(1) << 20);
    budget.maxLoopReduction = maxLoopReduction;
    pm.addPass(createFastNNRematerialize(budget));
  }
  FastNNPlanFusionOptions fusion;
  fusion.maxLoopReduction = maxLoopReduction;
  pm.addPass(createFastNNPlanFusion(fusion));
  FastNNLowerToRuntimeOptions lowering;
  lowering.entryName = options.mode == StepKind::Train  ? "train_step"
                       : options.mode == StepKind::Eval ? "eval_step"
                                                        : "forward";
  lowering.symbolPrefix = symbolPrefix(options);
  lowering.initializeState = options.mode != StepKind::Eval;
  lowering.externalWeights =
      options.externalWeights && lowering.initializeState;
  pm.addPass(createFastNNLowerToRuntime(lowering));
}

void buildStepPipeline(OpPassManager &pm, const PipelineOptions &options) {
  if (options.mode == StepKind::Train)
    buildTrainStepPipeline(pm, options);
  else if (options.mode == StepKind::Eval)
    buildEvalStepPipeline(pm);
}

} // namespace

std::string symbolPrefix(const PipelineOptions &options) {
  if (!options.symbolPrefix.empty())
    return options.symbolPrefix;
  return options.mode == StepKind::Eval ? "fnn_eval" : "fnn_model";
}

void buildCPUForwardPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  addForwardPasses(pm, options, Target::CPU);
}

void buildCUDAForwardPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  addForwardPasses(pm, options, Target::CUDA);
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
  buildRuntimeLoweringPipeline(pm, options, /*maxLoopReduction=*/4096);
  // The CPU part: loop nests outlined and run through fnn_parallel_for,
  // everything in the LLVM dialect.
  buildLowerToLLVMDialectPipeline(pm);
  pm.addPass(createFastNNVerifyCPULowered());
}

void buildCUDAKernelPipeline(OpPassManager &pm) {
  mlir::GpuNVVMAttachTargetOptions target;
  target.chip = "sm_90";
  // CUDA 13's ptxas rejects MLIR's default PTX ISA 6.0.
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(mlir::createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  mlir::ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(mlir::createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void buildCUDALoweringPipeline(OpPassManager &pm,
                               const PipelineOptions &options) {
  // cuDNN and cuBLASLt take the post-ops and biases the CPU's oneDNN does;
  // a reduction generated as loops sums sequentially in one thread per
  // output, so longer ones go to the kernel library.
  buildRuntimeLoweringPipeline(pm, options, /*maxLoopReduction=*/1024);
  pm.addPass(createFastNNOutlineGpuKernels());
  if (options.emulateGpuKernels) {
    pm.addPass(createFastNNEmulateGpuKernels());
    buildLowerToLLVMDialectPipeline(pm);
    pm.addPass(createFastNNVerifyCPULowered());
    return;
  }
  buildCUDAKernelPipeline(pm);
  if (options.gpuKernelsAsIR)
    return;
  mlir::GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = FASTNN_CUDA_TOOLKIT_DIR;
  binary.compilationTarget = "fatbin";
  pm.addPass(mlir::createGpuModuleToBinaryPass(binary));
  FastNNLaunchGpuKernelsOptions launches;
  launches.symbolPrefix = symbolPrefix(options);
  pm.addPass(createFastNNLaunchGpuKernels(launches));
  buildHostToLLVMDialectPipeline(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFastNNVerifyCUDALowered());
}

void buildCPUPipeline(OpPassManager &pm, const PipelineOptions &options) {
  buildCPUForwardPipeline(pm, options);
  buildStepPipeline(pm, options);
  buildCPULoweringPipeline(pm, options);
}

void buildCUDAPipeline(OpPassManager &pm, const PipelineOptions &options) {
  buildCUDAForwardPipeline(pm, options);
  buildStepPipeline(pm, options);
  buildCUDALoweringPipeline(pm, options);
}

void buildForwardPipeline(OpPassManager &pm, const PipelineOptions &options,
                          Target target) {
  if (target == Target::CUDA)
    buildCUDAForwardPipeline(pm, options);
  else
    buildCPUForwardPipeline(pm, options);
}

void buildPipeline(OpPassManager &pm, const PipelineOptions &options,
                   Target target) {
  if (target == Target::CUDA)
    buildCUDAPipeline(pm, options);
  else
    buildCPUPipeline(pm, options);
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
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cuda",
      "The whole CUDA compile of an imported model (what fastnnc "
      "--target=cuda runs): fastnn-cuda-forward, the step of `mode`, "
      "fastnn-cuda-lowering",
      buildCUDAPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cuda-forward",
      "Canonicalize the imported graph and give it the cuDNN kernels' "
      "layouts",
      buildCUDAForwardPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "fastnn-cuda-lowering",
      "Lower the step of `mode` to the runtime ABI for CUDA: loop nests as "
      "GPU kernels in an embedded sm_90 fatbin, the host in the LLVM "
      "dialect, checked",
      buildCUDALoweringPipeline);
  PassPipelineRegistration<>(
      "fastnn-cuda-kernels",
      "The kernels' gpu.module to NVVM for sm_90 (before gpu-module-to-binary)",
      buildCUDAKernelPipeline);
}

} // namespace fastnn
