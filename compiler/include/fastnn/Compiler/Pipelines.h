//===- Pipelines.h - the registered fastnn pass pipelines -------*- C++ -*-===//
//
// What fastnnc runs, as pass pipelines that fastnnc-opt runs too:
//
//   fastnn-cpu            = fastnn-cpu-forward, then fastnn-train-step or
//                           fastnn-eval-step (by `mode`; none for infer), then
//                           fastnn-cpu-lowering
//   fastnn-cpu-forward    the imported graph cleaned up, in the CPU kernels'
//                         layouts
//   fastnn-train-step     the training step (target-neutral)
//   fastnn-eval-step      the evaluation step (target-neutral)
//   fastnn-cpu-lowering   fusion planned for the CPU, the target-neutral
//                         lowering to the runtime ABI, the CPU part (host
//                         loop nests over fnn_parallel_for, the LLVM
//                         dialect) and the check of what the object
//                         emitter accepts
//
//   fastnn-cuda           = fastnn-cuda-forward, the step, fastnn-cuda-lowering
//   fastnn-cuda-forward   as fastnn-cpu-forward, in cuDNN's layouts
//   fastnn-cuda-lowering  fusion planned for CUDA, the same target-neutral
//                         lowering, the loop nests as GPU kernels
//                         (fastnn-outline-gpu-kernels, fastnn-cuda-kernels,
//                         gpu-module-to-binary: an sm_90 fatbin), launched
//                         through abi.h (fastnn-launch-gpu-kernels), the host
//                         in the LLVM dialect, and its check
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_COMPILER_PIPELINES_H
#define FASTNN_COMPILER_PIPELINES_H

#include "fastnn/Transforms/OptionEnums.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace fastnn {

/// What a compile produces: the step of a trainer, the evaluation step
/// train.bin also holds, or the forward function of an inference
/// executable.
enum class StepKind { Train, Eval, Infer };

/// The options of every fastnn pipeline; each pipeline reads the ones it
/// needs. fastnnc sets them from the compile-time hyperparameters
/// (fastnn/Compiler/TrainConfig.h), with the same defaults.
struct PipelineOptions : public mlir::PassPipelineOptions<PipelineOptions> {
  Option<StepKind> mode{
      *this, "mode", llvm::cl::desc("What to compile"),
      llvm::cl::init(StepKind::Train),
      llvm::cl::values(
          clEnumValN(StepKind::Train, "train",
                     "@train_step from @forward (fastnn-train-step)"),
          clEnumValN(StepKind::Eval, "eval",
                     "@eval_step from @forward (fastnn-eval-step), its "
                     "state filled by the caller"),
          clEnumValN(StepKind::Infer, "infer", "@forward as it is"))};
  Option<std::string> symbolPrefix{
      *this, "symbol-prefix",
      llvm::cl::desc("Prefix of the exported symbols (default: fnn_eval for "
                     "mode=eval, else fnn_model)"),
      llvm::cl::init("")};
  Option<bool> externalWeights{
      *this, "external-weights",
      llvm::cl::desc("Embed no initial weights: fastnn-lower-to-runtime "
                     "lists them in fastnn.external_weights for fastnnc to "
                     "write beside the executable (fastnnc "
                     "--weights=external)"),
      llvm::cl::init(false)};
  Option<LayoutChoice> layout{
      *this, "layout",
      llvm::cl::desc("Layout of convolutions, pooling and batch norm"),
      llvm::cl::init(LayoutChoice::Auto), layoutValues()};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("Type of convolutions and matrix products"),
      llvm::cl::init(Precision::FP32), precisionValues()};

  // fastnn-train-step: fastnn-build-train-step's options.
  Option<mlir::fastnn::Optimizer> optimizer{
      *this, "optimizer", llvm::cl::desc("The optimizer's update rule"),
      llvm::cl::init(mlir::fastnn::Optimizer::RMSProp), OptimizerValues()};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("L2 coefficient"),
                             llvm::cl::init(0.00004)};
  Option<int64_t> dropoutSeed{*this, "dropout-seed",
                              llvm::cl::desc("Seed of the dropout masks"),
                              llvm::cl::init(0)};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("Momentum of momentum"),
                          llvm::cl::init(0.9)};
  Option<double> rmspropMomentum{*this, "rmsprop-momentum",
                                 llvm::cl::desc("RMSProp momentum"),
                                 llvm::cl::init(0.9)};
  Option<double> rmspropDecay{*this, "rmsprop-decay",
                              llvm::cl::desc("RMSProp decay"),
                              llvm::cl::init(0.9)};
  Option<double> adamBeta1{*this, "adam-beta1",
                           llvm::cl::desc("Adam first-moment decay"),
                           llvm::cl::init(0.9)};
  Option<double> adamBeta2{*this, "adam-beta2",
                           llvm::cl::desc("Adam second-moment decay"),
                           llvm::cl::init(0.999)};
  Option<double> optEpsilon{*this, "opt-epsilon",
                            llvm::cl::desc("Optimizer epsilon"),
                            llvm::cl::init(1.0)};
  Option<double> adadeltaRho{*this, "adadelta-rho",
                             llvm::cl::desc("Adadelta decay"),
                             llvm::cl::init(0.95)};
  Option<double> adagradInitialAccumulatorValue{
      *this, "adagrad-initial-accumulator-value",
      llvm::cl::desc("Adagrad accumulator start"), llvm::cl::init(0.1)};
  Option<double> ftrlLearningRatePower{
      *this, "ftrl-learning-rate-power",
      llvm::cl::desc("FTRL learning-rate power"), llvm::cl::init(-0.5)};
  Option<double> ftrlInitialAccumulatorValue{
      *this, "ftrl-initial-accumulator-value",
      llvm::cl::desc("FTRL accumulator start"), llvm::cl::init(0.1)};
  Option<double> ftrlL1{*this, "ftrl-l1", llvm::cl::desc("FTRL L1"),
                        llvm::cl::init(0.0)};
  Option<double> ftrlL2{*this, "ftrl-l2", llvm::cl::desc("FTRL L2"),
                        llvm::cl::init(0.0)};
  Option<double> lossScale{*this, "loss-scale",
                           llvm::cl::desc("Loss scale (the initial one with "
                                          "dynamic-loss-scale)"),
                           llvm::cl::init(1.0)};
  Option<bool> dynamicLossScale{
      *this, "dynamic-loss-scale",
      llvm::cl::desc("Adapt the loss scale (fastnn-dynamic-loss-scale)"),
      llvm::cl::init(false)};
  // fastnn-train-step: the passes after the step is built.
  Option<double> maxGradientNorm{
      *this, "max-gradient-norm",
      llvm::cl::desc("Clip the gradients to this global norm (<= 0: no "
                     "clipping)"),
      llvm::cl::init(0.0)};
  Option<int64_t> iterationsPerLoop{
      *this, "iterations-per-loop",
      llvm::cl::desc("Training steps per call (fastnn-sink-loop)"),
      llvm::cl::init(1)};
  Option<bool> gpuKernelsAsIR{
      *this, "gpu-kernels-as-ir",
      llvm::cl::desc("CUDA: stop before gpu-module-to-binary, leaving the "
                     "host's gpu.launch_func ops and the kernels' gpu.module "
                     "in NVVM to read (what fastnnc --emit=mlir prints)"),
      llvm::cl::init(false)};
  Option<bool> emulateGpuKernels{
      *this, "emulate-gpu-kernels",
      llvm::cl::desc("CUDA: run the outlined kernels as host loops over "
                     "their grid (fastnn-emulate-gpu-kernels) and lower the "
                     "host for the CPU runtime, to test the CUDA lowering on "
                     "a machine without a GPU"),
      llvm::cl::init(false)};
  Option<int64_t> allreduceBucketBytes{
      *this, "allreduce-bucket-bytes",
      llvm::cl::desc("Largest allreduce bucket (fastnn-fuse-allreduce)"),
      llvm::cl::init(26214400)};
  Option<int64_t> memoryBudgetMb{
      *this, "memory-budget-mb",
      llvm::cl::desc("Train: largest arena in MiB, met by recomputing "
                     "activations (fastnn-rematerialize; 0: no budget)"),
      llvm::cl::init(0)};
};

/// fastnn-cpu: the whole CPU compile of an imported module, to the LLVM
/// dialect (what fastnnc translates to an object).
void buildCPUPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// fastnn-cpu-forward: canonicalization and the CPU kernels' layouts of the
/// imported forward graph; the inputs keep the layout their writer uses
/// (infer.bin's .npy files: the model's; train.bin's loader: NCHW).
void buildCPUForwardPipeline(mlir::OpPassManager &pm,
                             const PipelineOptions &options);

/// fastnn-train-step: @train_step from the forward graph, averaged over
/// the workers, clipped, loss-scaled, in mixed precision, sunk into a loop
/// and with its allreduces in buckets.
void buildTrainStepPipeline(mlir::OpPassManager &pm,
                            const PipelineOptions &options);

/// fastnn-eval-step: @eval_step from the forward graph.
void buildEvalStepPipeline(mlir::OpPassManager &pm);

/// fastnn-cpu-lowering: the step of `mode` to the LLVM dialect for the CPU
/// runtime, checked by fastnn-verify-cpu-lowered.
void buildCPULoweringPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// fastnn-cuda: the whole CUDA compile of an imported module, to the LLVM
/// dialect with the GPU kernels embedded as a fatbin.
void buildCUDAPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// fastnn-cuda-forward: as fastnn-cpu-forward, in the layouts cuDNN's
/// kernels want (NHWC for fp16 and bf16, for the tensor cores).
void buildCUDAForwardPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// fastnn-cuda-lowering: the step of `mode` to the LLVM dialect for the
/// CUDA runtime, checked by fastnn-verify-cuda-lowered.
void buildCUDALoweringPipeline(mlir::OpPassManager &pm,
                               const PipelineOptions &options);

/// fastnn-cuda-kernels: the gpu.module of fastnn-outline-gpu-kernels to
/// NVVM for sm_90, ready for gpu-module-to-binary.
void buildCUDAKernelPipeline(mlir::OpPassManager &pm);

/// The forward or the whole pipeline of `target`.
void buildForwardPipeline(mlir::OpPassManager &pm,
                          const PipelineOptions &options, Target target);
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options,
                   Target target);

/// The prefix of the lowered step's exported symbols: `symbol-prefix`, or
/// fnn_eval for the evaluation step and fnn_model otherwise.
std::string symbolPrefix(const PipelineOptions &options);

/// Registers the pipelines above with their names.
void registerPipelines();

} // namespace fastnn

#endif // FASTNN_COMPILER_PIPELINES_H
