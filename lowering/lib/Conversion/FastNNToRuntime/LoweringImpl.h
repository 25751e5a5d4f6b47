//===- LoweringImpl.h - internals of fastnn-lower-to-runtime ---*- C++ -*-===//

#ifndef FASTNN_LOWERING_FASTNNTORUNTIME_LOWERINGIMPL_H
#define FASTNN_LOWERING_FASTNNTORUNTIME_LOWERINGIMPL_H

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace fastnn::lowering {

/// How the model's values map onto the arena: which values are views of
/// another value's buffer (reshape, dropout, fused epilogues), and the byte
/// offset of every buffer.
struct ArenaLayout {
  llvm::DenseMap<mlir::Value, mlir::Value> aliasOf;
  llvm::DenseMap<mlir::Value, int64_t> offsets;
  /// Post-op (FNN_POST_*) fused into a kernel op.
  llvm::DenseMap<mlir::Operation *, int64_t> postOps;
  /// Kernels that write into another value's buffer, adding to it (an
  /// accumulating convolution): their result is an alias, yet they run.
  llvm::DenseSet<mlir::Operation *> accumulating;
  /// The other operand of an add fused into the kernel that reads it: a
  /// matmul's bias, a training batch norm's residual.
  llvm::DenseMap<mlir::Operation *, mlir::Value> fusedAddend;
  /// Elementwise ops computed inside the loop nest of their only user (an
  /// elementwise op of the same shape): their results take no memory and
  /// they emit no code of their own.
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> inlinedInto;
  /// A convolution computed, in one kernel (fnn_conv2d_chain), by the
  /// convolution that alone reads it, and the reverse: the convolution
  /// before. A chain's kernel is emitted at its last convolution; the
  /// others emit no code, and their results keep their buffers, which a
  /// target running the convolutions in turn writes.
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> chainedInto, chainedFrom;
  /// An allreduce's buffer (its bucket): one slice per input, back to back
  /// at aligned offsets, reduced in place by one collective call.
  struct Bucket {
    int64_t offset = 0, bytes = 0;
    /// Inputs copied into their slice as the collective starts; the other
    /// inputs' producers wrote there.
    llvm::SmallVector<unsigned> copiedIn;
    /// The op before which the collective is awaited: the first that reads
    /// a result, else the return.
    mlir::Operation *waitBefore = nullptr;
  };
  llvm::DenseMap<mlir::Operation *, Bucket> buckets;
  /// The collectives each op awaits before it runs.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Operation *, 1>>
      awaitedBefore;
  int64_t totalBytes = 0;
  /// The step (1-based position in the step's block) at which the buffers
  /// alive together hold the most bytes, and those bytes.
  int64_t peakStep = 0, peakLiveBytes = 0;

  mlir::Value root(mlir::Value value) const {
    while (true) {
      auto it = aliasOf.find(value);
      if (it == aliasOf.end())
        return value;
      value = it->second;
    }
  }
  int64_t offsetOf(mlir::Value value) const {
    return offsets.lookup(root(value));
  }
  /// A view of another buffer or an epilogue fused into its producer: an
  /// op with no code of its own (an allreduce's results alias its bucket,
  /// an accumulating kernel's its addend, yet they have work to do).
  bool isAlias(mlir::Operation *op) const {
    return !mlir::isa<mlir::fastnn::AllReduceOp>(op) &&
           !accumulating.contains(op) && op->getNumResults() == 1 &&
           aliasOf.count(op->getResult(0));
  }
};

/// The decisions fastnn-plan-fusion records on the ops (discardable
/// attributes) and fastnn-lower-to-runtime reads; without them nothing is
/// fused and every reduction is a kernel call.
/// On a kernel (conv2d, batch_norm, matmul): the activation its epilogue
/// applies, "relu" (or, on conv2d, "relu6": clip 0..6).
constexpr llvm::StringLiteral kPostOpAttr = "fastnn.post_op";
constexpr llvm::StringLiteral kPostOpRelu = "relu";
constexpr llvm::StringLiteral kPostOpRelu6 = "relu6";
/// On a conv2d: the add that reads it is computed in place, the
/// convolution's result added to the other addend's buffer, which becomes
/// the convolution's output (before the activation, if any).
constexpr llvm::StringLiteral kAccumulateAttr = "fastnn.accumulate";
/// On a matmul: the add that reads it adds its bias.
constexpr llvm::StringLiteral kBiasFusedAttr = "fastnn.bias_fused";
/// On a batch_norm_train: the add that reads its result adds the other
/// operand, a residual computed before it (before the activation, if any),
/// in the batch norm's kernel (FNN_POST_RESIDUAL).
constexpr llvm::StringLiteral kResidualFusedAttr = "fastnn.residual_fused";
/// On that relu, relu6 clip or add: its result is the producer's (no buffer,
/// no code).
constexpr llvm::StringLiteral kFusedIntoProducerAttr =
    "fastnn.fused_into_producer";
/// On a pointwise conv2d (1x1, stride 1, no padding, one group) that only a
/// depthwise conv2d reads, and on that depthwise conv2d when only a
/// pointwise conv2d reads it: computed with its reader as one kernel
/// (fnn_conv2d_chain), MobileNet v2's expansion, depthwise and projection
/// convolutions.
constexpr llvm::StringLiteral kChainedIntoConsumerAttr =
    "fastnn.chained_into_consumer";
/// On an elementwise op: computed inside its only user's loop nest.
constexpr llvm::StringLiteral kInlineIntoConsumerAttr =
    "fastnn.inline_into_consumer";
/// On a reduction: "loops" (generated) or "kernel" (a runtime call).
constexpr llvm::StringLiteral kCodegenAttr = "fastnn.codegen";
constexpr llvm::StringLiteral kCodegenLoops = "loops";
constexpr llvm::StringLiteral kCodegenKernel = "kernel";

/// A 1x1 convolution with stride 1, no padding and one group.
bool isPointwiseConv(mlir::fastnn::Conv2DOp conv);
/// A convolution with one filter per channel (groups = C = O > 1).
bool isDepthwiseConv(mlir::fastnn::Conv2DOp conv);
/// The convolution that alone reads `conv`'s result, directly or through
/// the activation fused into `conv`, as its input; null if there is none.
mlir::fastnn::Conv2DOp soleConvConsumer(mlir::fastnn::Conv2DOp conv);

/// Reductions the plan generates as loops (`fastnn.codegen = "loops"`);
/// the others are kernel calls.
bool reducesInLoops(mlir::Operation *op);

/// True if a backward op reads `op`'s saved state, so `op` must be created
/// with the runtime's training variant.
bool hasBackwardUser(mlir::Operation *op);

/// Appends an fnn_shape / a double as descriptor words.
void appendShape(llvm::SmallVectorImpl<int64_t> &words,
                 llvm::ArrayRef<int64_t> shape);
void appendShape(llvm::SmallVectorImpl<int64_t> &words, mlir::Value value);
void appendDouble(llvm::SmallVectorImpl<int64_t> &words, double value);
/// The fnn_dtype of an element type, and of a tensor value's elements.
int64_t dtypeOf(mlir::Type elementType);
int64_t dtypeOf(mlir::Value value);
/// The fnn_layout word of a layout attribute's value.
int64_t layoutWord(mlir::fastnn::Layout layout);

/// Ops whose buffers live for the whole run and hold the same value on
/// every run: parameter reads and constants, whose initial values
/// fnn_model_init copies in (LowerToRuntime.cpp), and in an inference step
/// the ops computed from those alone (kComputedOnceAttr) that other ops
/// read; the first run computes them (those only first-run ops read are
/// its temporaries).
bool isWrittenAtInit(mlir::Operation *op);

/// On an op of an inference step computed from parameters and constants
/// alone (a filter's layout transpose, batch norm folded into a filter):
/// the first run computes it, later runs reuse its buffer.
constexpr llvm::StringLiteral kComputedOnceAttr = "fastnn.computed_once";

/// The arena at `arena` (an !llvm.ptr of `totalBytes` bytes) as a memref of
/// i8, so that linalg code can take views of it.
mlir::Value arenaAsMemRef(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value arena, int64_t totalBytes);

/// Destroys the `count` kernels of the pointer table `table` with
/// `destroy` (fnn_kernel_destroy) and clears their slots, so that a
/// released model can be initialised again.
void destroyKernelTable(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value table, int64_t count,
                        mlir::LLVM::LLVMFuncOp destroy);

/// `arena + offset` as an i8 GEP.
mlir::Value arenaPointer(mlir::OpBuilder &builder, mlir::Location loc,
                         mlir::Value arena, int64_t offset);

/// Reads the recorded fusion, decides aliasing, then plans offsets for
/// `forward`; fails on fusion attributes it cannot apply.
mlir::FailureOr<ArenaLayout> planArena(mlir::func::FuncOp forward);

/// Records fastnn-plan-fusion's decisions on the ops of `body`.
void planFusion(mlir::Block &body, int64_t maxLoopReduction);

/// Loop sinking (LoopSinking.cpp): the fastnn.loop a sunk step function is
/// (null if it is not one); the block of ops one step runs (the loop's body,
/// else the function's); the values that live across a sunk loop's
/// iterations (the function's inputs, its constants and the stacked
/// results).
mlir::fastnn::LoopOp sunkLoop(mlir::func::FuncOp step);
mlir::Block &stepBlock(mlir::func::FuncOp step);
llvm::SmallVector<mlir::Value> loopBoundaryValues(mlir::func::FuncOp step);

/// Bytes one element of `type` occupies in memory.
int64_t elementBytes(mlir::Type type);
int64_t tensorBytes(mlir::RankedTensorType type);

/// Emits code into the run function. One instance per lowering.
class RunEmitter {
public:
  /// `constantState`: the step never changes the state fnn_model_init
  /// writes, and nothing else does between its runs (an inference model).
  RunEmitter(mlir::ModuleOp module, const ArenaLayout &layout,
             mlir::OpBuilder &initBuilder, mlir::OpBuilder &runBuilder,
             mlir::Value device, mlir::Value initArena, mlir::Value runArena,
             mlir::Block *initFailure, bool constantState);

  /// Lowers one op of the forward function inside a trace span; ops that
  /// are pure aliases emit nothing.
  mlir::LogicalResult lower(mlir::Operation *op);

  int64_t numKernels() const { return kernelCount; }

  /// An iteration of a sunk loop: stores the iteration number (an index)
  /// where the body reads `index`, and the yielded scalars at that number
  /// of the stacked results.
  void storeIteration(mlir::Value index, mlir::Value iteration);
  void stackIteration(mlir::fastnn::LoopYieldOp yield, mlir::Value iteration);

private:
  // Kernel calls (KernelCalls.cpp).
  mlir::LogicalResult lowerKernelOp(mlir::Operation *op);
  /// Creates a kernel in fnn_model_init from `descriptor`; `forward` (a
  /// kernel index) is passed too for backward kernels made from their
  /// forward kernel.
  int64_t createKernel(mlir::Location loc, llvm::StringRef createName,
                       llvm::ArrayRef<int64_t> descriptor,
                       std::optional<int64_t> forward = std::nullopt);
  /// An op that runs as a kernel: the training step's kernels here
  /// (TrainingCalls.cpp), the others through lowerKernelOp.
  mlir::LogicalResult lowerTrainingKernelOp(mlir::Operation *op);
  /// A result's pointer, or null when nothing reads it (the kernel then
  /// skips computing it).
  mlir::Value pointerIfUsed(mlir::Location loc, mlir::Value value);
  void callForward(mlir::Location loc, llvm::StringRef forwardName,
                   int64_t kernel, llvm::ArrayRef<mlir::Value> pointers);
  /// Whether `value` is the same on every run (isWrittenAtInit): the
  /// kernel reading it may keep its own copy.
  bool isSameOnEveryRun(mlir::Value value) const;
  /// Lowers a kComputedOnceAttr op into the block the first run alone
  /// runs.
  mlir::LogicalResult lowerOnFirstRun(mlir::Operation *op);

  // Loops (LoopCodegen.cpp).
  mlir::LogicalResult lowerLoopOp(mlir::Operation *op);
  /// One loop nest for `root` and the producers inlined into it.
  mlir::LogicalResult lowerElementwise(mlir::Operation *root);
  mlir::LogicalResult lowerReduction(mlir::Operation *op);
  mlir::LogicalResult lowerAllFinite(mlir::fastnn::AllFiniteOp op);
  mlir::LogicalResult lowerUpdateLossScale(mlir::fastnn::UpdateLossScaleOp op);
  mlir::LogicalResult lowerNextBatch(mlir::fastnn::NextBatchOp op);
  /// A memref view of `value`'s buffer, with `elementType` (same width)
  /// instead of its own when given.
  mlir::Value view(mlir::Location loc, mlir::Value value,
                   mlir::Type elementType = {});

  // Collectives (CollectiveCalls.cpp).
  mlir::LogicalResult lowerAllReduce(mlir::fastnn::AllReduceOp op);
  void awaitAllReduce(mlir::Operation *op);

  /// The span name of `op`, "<op name> <location name>" (or `what` for the
  /// op name), as a pointer to a constant string (one global per distinct
  /// name).
  mlir::Value traceName(mlir::Operation *op, llvm::StringRef what = "");
  void traceBegin(mlir::Operation *op, llvm::StringRef what = "");
  void traceEnd(mlir::Location loc);

  mlir::Value pointer(mlir::Location loc, mlir::Value value);
  mlir::Value nullPointer(mlir::Location loc);
  mlir::LLVM::LLVMFuncOp runtimeFunction(llvm::StringRef name,
                                         mlir::Type result,
                                         llvm::ArrayRef<mlir::Type> params);

  mlir::ModuleOp module;
  /// The runtime functions declared so far, by name.
  llvm::StringMap<mlir::LLVM::LLVMFuncOp> runtimeFunctions;
  const ArenaLayout &layout;
  mlir::OpBuilder &initBuilder, &runBuilder;
  mlir::Value device, initArena, runArena;
  mlir::Block *initFailure;
  bool constantState;
  /// The then-block of the first run's `scf.if`, made with the first
  /// kComputedOnceAttr op.
  mlir::Block *firstRunBlock = nullptr;
  mlir::Value arenaMemRef;
  mlir::LLVM::GlobalOp kernelTable;
  int64_t kernelCount = 0;
  /// The kernel each op was lowered to.
  llvm::DenseMap<mlir::Operation *, int64_t> kernelOf;
  llvm::StringMap<mlir::LLVM::GlobalOp> traceNames;
};

} // namespace fastnn::lowering

#endif // FASTNN_LOWERING_FASTNNTORUNTIME_LOWERINGIMPL_H
