//===- Kernel.h - oneDNN-backed kernel state behind the ABI -----*- C++ -*-===//
//
// The CPU side of fnn_device and fnn_kernel (whose backend-neutral base,
// checks and error boundary are runtime/kernels/common's). A kernel is a short
// sequence of oneDNN primitives (the op's own, plus reorders between the ABI's
// plain layouts and the blocked ones oneDNN's fast implementations want) whose
// memory objects are all made at create time. The caller's
// pointers are bound to "operand" memory objects on every call, which is only
// a pointer store. Buffers that must outlive a call (prepared weights,
// optimizer state) are owned by the kernel; those that live only while the
// kernel runs (reorder and conversion buffers, oneDNN scratchpads, outputs
// the caller did not ask for) lie in the device's shared scratch.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_KERNELS_CPU_KERNEL_H
#define FASTNN_RUNTIME_KERNELS_CPU_KERNEL_H

#include "fastnn/runtime/AlignedBuffer.h"
#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/KernelBase.h"
#include "fastnn/runtime/OpDescriptors.h"
#include "fastnn/runtime/Optimizer.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/abi.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct fnn_device {
  dnnl::engine Engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream Stream{Engine};
  /// Memory each kernel uses only while it runs. A device's kernels run one
  /// at a time, in call order (its stream), so they share it: a model's
  /// transient buffers cost the largest kernel's, not their sum (bf16 on
  /// AVX2 and fp16 convert every activation to float32 around the
  /// primitives). Grown at kernel creation; Generation counts the growths,
  /// so a kernel knows when to point its memory objects at the new buffer.
  fastnn::runtime::AlignedBuffer Scratch;
  size_t ScratchBytes = 0;
  uint64_t ScratchGeneration = 0;
  void reserveScratch(size_t Bytes);
};

namespace fastnn::cpu {

using runtime::AlignedBuffer;
using runtime::AlignedFree;
using runtime::allocateAligned;
using runtime::checkF32;
using runtime::checkFloatType;
using runtime::checkLayout;
using runtime::checkPostOp;
using runtime::checkShape;
using runtime::clearLastError;
using runtime::formatPair;
using runtime::KernelError;
using runtime::layoutName;
using runtime::setLastError;
using runtime::shapeText;

/// The oneDNN type an ABI dtype (FNN_F32, FNN_BF16, FNN_F16) is stored in;
/// throws for the other dtypes.
dnnl::memory::data_type storageType(int64_t DType);
/// Whether oneDNN has bfloat16 primitives on this CPU (AVX-512 and later).
bool cpuComputesBf16();
/// Whether this CPU runs the hand-written loops' AVX2 and AVX-512
/// (F, BW, VL, DQ) variants, which they are compiled for with `target`
/// attributes (the build's baseline is x86-64).
bool cpuHasAvx2();
bool cpuHasAvx512();
/// An element of a float32 or bfloat16 (uint16_t bits) tensor, widened to
/// float for a hand-written loop's arithmetic, and narrowed back (rounding
/// to nearest even).
inline float widen(float Value) { return Value; }
inline float widen(uint16_t Bfloat16) {
  return runtime::bfloat16ToFloat(Bfloat16);
}
inline void narrow(float &Out, float Value) { Out = Value; }
inline void narrow(uint16_t &Out, float Value) {
  Out = runtime::floatToBfloat16(Value);
}
/// The type a kernel computes in: the storage type, except that oneDNN 2.6
/// has no float16 arithmetic on CPU, and no bfloat16 arithmetic before
/// AVX-512, so such operands are converted to float32 around the primitives
/// (correct, not fast).
dnnl::memory::data_type computeType(int64_t DType);
/// \p Desc with another element type (same dims and strides or format).
dnnl::memory::desc withType(const dnnl::memory::desc &Desc,
                            dnnl::memory::data_type Type);

/// Memory descriptor of an activation tensor given in the ABI's logical
/// order for \p Layout (NCHW: N, C, spatial...; NHWC: N, spatial..., C),
/// described to oneDNN in its own N, C, spatial... order with the strides
/// of the layout.
dnnl::memory::desc
activationDesc(const fnn_shape &Shape, int64_t Layout,
               dnnl::memory::data_type Type = dnnl::memory::data_type::f32);
/// Memory descriptor of a dense row-major tensor.
dnnl::memory::desc
denseDesc(const dnnl::memory::dims &Dims,
          dnnl::memory::data_type Type = dnnl::memory::data_type::f32);
dnnl::memory::dims toDims(const fnn_shape &Shape);
/// Primitive attributes every kernel uses: a user scratchpad (so that
/// oneDNN never allocates while executing) and the fused post-op
/// (FNN_POST_*: a sum post-op for FNN_POST_ACCUMULATE, then the
/// activation).
dnnl::primitive_attr makeAttr(int64_t PostOp);
/// makeAttr with the post-ops \p Ops.
dnnl::primitive_attr makeAttr(const dnnl::post_ops &Ops);
/// Appends the activation of post-op word \p PostOp (FNN_POST_RELU,
/// FNN_POST_RELU6; nothing for FNN_POST_NONE) to \p Ops.
void appendActivation(dnnl::post_ops &Ops, int64_t PostOp);

/// A convolution's three passes, which oneDNN computes with primitives of
/// their own (and which may take different algorithms).
enum class ConvPass { Forward, BackwardData, BackwardWeights };

/// Whether pass \p Pass of convolution \p D (float32) is one where
/// oneDNN's Winograd F(4x4, 3x3) kernel (jit_wino_4x3, on channel-blocked
/// nChw16c activations) beats its direct ones: a 3x3, unstrided,
/// undilated, ungrouped convolution with at least 14x14 output pixels and
/// whole 16-channel blocks, and channels enough for the pass. Measured on 2
/// AVX-512 cores (ResNet-50's and Inception-v3's shapes, batch 4-8): 2x the
/// direct kernels at 56x56 and 28x28 with 64 channels and more, 1.6x at
/// 14x14, slower at 7x7. With fewer channels the transforms dominate: the
/// forward pass, reducing over the input channels, is slower below 48 of
/// them (32 -> 64 at 147x147: 17.6 against 13.3 ms); the backward-data pass,
/// reducing over the output channels, gains nothing at 16 of either; the
/// backward-weights pass, reducing over the pixels, still gains 2.2x at
/// 16 -> 32 but not at 16 -> 16. It computes in float32 with a relative rms
/// difference from the direct kernels of ~1e-6 (the size of float32
/// summation-order differences over 576 products), so it is the fastest
/// float32 algorithm, not a lower precision.
bool winogradPays(const fnn_conv2d_desc &D, ConvPass Pass);

/// The primitive descriptor of pass \p Pass of convolution \p D that
/// \p Create (Src, Dst, algorithm) makes: Winograd on nChw16c where
/// winogradPays, else direct on \p Src and \p Dst, else, where those
/// layouts have only oneDNN's reference implementation (grouped
/// convolutions whose groups are not whole channel blocks), direct on the
/// layouts oneDNN chooses.
template <typename CreateFn>
auto chooseConvPrimitive(const fnn_conv2d_desc &D, ConvPass Pass,
                         const dnnl::memory::desc &Src,
                         const dnnl::memory::desc &Dst, CreateFn Create)
    -> decltype(Create(Src, Dst, dnnl::algorithm::convolution_direct)) {
  auto As = [](const dnnl::memory::desc &M, dnnl::memory::format_tag Tag) {
    return dnnl::memory::desc(M.dims(), M.data_type(), Tag);
  };
  decltype(Create(Src, Dst, dnnl::algorithm::convolution_direct)) PD;
  if (winogradPays(D, Pass)) {
    try {
      PD = Create(As(Src, dnnl::memory::format_tag::nChw16c),
                  As(Dst, dnnl::memory::format_tag::nChw16c),
                  dnnl::algorithm::convolution_winograd);
    } catch (const dnnl::error &) {
    }
  }
  try {
    if (!PD)
      PD = Create(Src, Dst, dnnl::algorithm::convolution_direct);
  } catch (const dnnl::error &) {
  }
  if (!PD || std::string(PD.impl_info_str()).rfind("ref", 0) == 0)
    PD = Create(As(Src, dnnl::memory::format_tag::any),
                As(Dst, dnnl::memory::format_tag::any),
                dnnl::algorithm::convolution_direct);
  return PD;
}

/// Op-specific state a kernel's *_forward needs besides its steps (e.g. the
/// buffers batch norm folds its statistics into before the primitive runs).
struct KernelState {
  virtual ~KernelState() = default;
};

/// The oneDNN workspace a training forward kernel writes for the backward
/// kernels made from it (max pooling's argmax, LRN's intermediate scale).
/// Allocated at create and shared with those kernels (a copy of the state),
/// so that the kernels may be destroyed in any order.
struct SavedWorkspace : KernelState {
  SavedWorkspace(const dnnl::engine &Engine, const dnnl::memory::desc &Desc);
  std::shared_ptr<void> Buffer;
  dnnl::memory Memory;
};

/// The CPU kernels' fnn_kernel.
class CpuKernel final : public fnn_kernel {
public:
  explicit CpuKernel(fnn_device &Device) : Device(Device) {}

  /// The CPU kernel behind an ABI handle the caller got from a CPU
  /// *_create (the hot path: no check).
  static CpuKernel *from(fnn_kernel *Kernel) {
    return static_cast<CpuKernel *>(Kernel);
  }
  /// The CPU kernel behind a handle, or null if it is none (or null): how
  /// a backward kernel checks the forward kernel it is given.
  static const CpuKernel *find(const fnn_kernel *Kernel) {
    return dynamic_cast<const CpuKernel *>(Kernel);
  }

  fnn_device &device() const { return Device; }
  /// A memory object for a pointer the caller passes on every call. Slots
  /// are numbered in the order operands are added; bind() takes the slot.
  void addOperand(const dnnl::memory::desc &Desc);
  const dnnl::memory &operand(int Slot) const { return Operands[Slot]; }
  /// A memory object backed by a buffer the kernel owns, whose contents
  /// outlive a call (state, a prepared constant).
  dnnl::memory addInternal(const dnnl::memory::desc &Desc);
  /// A memory object in the device's scratch, for data that lives only
  /// while run() executes (e.g. the output of a reorder into a blocked
  /// layout).
  dnnl::memory addTransient(const dnnl::memory::desc &Desc);
  /// An operand slot the caller never binds, backed by the device's
  /// scratch: the spare that orSpare() hands out for an output nobody
  /// asked for.
  void addSpareOperand(const dnnl::memory::desc &Desc);
  /// Appends a primitive executed by run() in order. \p Scratchpad is the
  /// primitive's scratchpad descriptor (user mode); all steps share one,
  /// in the device's scratch after the transient buffers.
  void addStep(const dnnl::primitive &Primitive,
               const std::vector<std::pair<int, dnnl::memory>> &Args,
               const dnnl::memory::desc &Scratchpad);
  /// The most memory objects a host step reads or writes.
  static constexpr size_t MaxHostStepMemories = 4;
  /// Appends a step of the kernel's own code (no primitive): run() calls
  /// \p Run with the data handles of \p Memories (operands, transients), in
  /// order, as they are bound then.
  void addHostStep(const std::vector<dnnl::memory> &Memories,
                   std::function<void(void *const *)> Run);
  /// The memory a step should read operand \p Slot from when the step wants
  /// layout and type \p Wanted: the operand itself if it already is that,
  /// else a kernel-owned buffer filled by conversion or reorder steps
  /// appended here (so call it before adding the step that reads it).
  dnnl::memory inputIn(int Slot, const dnnl::memory::desc &Wanted);
  /// inputIn for an operand whose pointer and contents are the same on
  /// every call (an inference model's weights): the conversion or reorder
  /// steps run on the first call only, and later calls read the
  /// kernel-owned copy.
  dnnl::memory constantInputIn(int Slot, const dnnl::memory::desc &Wanted);
  /// The memory a step should write operand \p Slot to when it produces
  /// layout \p Produced: the operand itself, or a kernel-owned buffer that
  /// finishOutput() reorders into the operand.
  dnnl::memory outputIn(int Slot, const dnnl::memory::desc &Produced);
  /// Appends the reorder (and conversion) from \p Produced (outputIn's
  /// result) into operand \p Slot, if they differ; call it after adding the
  /// producing step.
  void finishOutput(int Slot, const dnnl::memory &Produced);

  /// Hot path: a pointer store per operand, then the primitives. Never
  /// throws or allocates in our code; a oneDNN failure is recorded for
  /// fnn_last_error.
  void bind(int Slot, const void *Data);
  /// \p Data, or the buffer of operand \p Spare (an addSpareOperand slot)
  /// when the caller passed NULL: where a backward writes a gradient nobody
  /// asked for.
  void *orSpare(void *Data, int Spare);
  /// Runs the first \p Count steps (all by default); constantInputIn's
  /// steps only the first time.
  void run(size_t Count = SIZE_MAX);
  size_t stepCount() const { return Steps.size(); }

  void setState(std::unique_ptr<KernelState> S) { State = std::move(S); }
  /// The state set at create time, as the type its op gave it.
  template <typename T> T &state() const { return static_cast<T &>(*State); }
  /// The state if it is a \p T, else null: how a backward kernel checks the
  /// forward kernel it is made from.
  template <typename T> T *findState() const {
    return dynamic_cast<T *>(State.get());
  }

private:
  /// What a step without a primitive converts (see Step).
  enum class Conversion { None, ToFloat, FromFloat };
  /// A oneDNN primitive, a host step, or (neither) a conversion between float32
  /// and the half type oneDNN cannot compute in on this CPU (float16;
  /// bfloat16 before AVX-512), from Memories[0] to Memories[1]: oneDNN
  /// 2.6's reorders between those are its scalar reference loop, ~100x
  /// slower than this one.
  struct Step {
    dnnl::primitive Primitive;
    /// Held so that the C handles in Args stay valid.
    std::vector<dnnl::memory> Memories;
    std::vector<dnnl_exec_arg_t> Args;
    size_t Elements = 0;
    Conversion Direction = Conversion::None;
    /// The half type converted from or to (f16 or bf16).
    dnnl::memory::data_type Half = dnnl::memory::data_type::undef;
    /// Prepares a constant operand: run on the first call only.
    bool Once = false;
    /// A host step's code (see addHostStep); Memories are its operands.
    std::function<void(void *const *)> Host;
  };
  /// Appends a conversion of dense \p From into dense \p To (one of them
  /// float32, the other a type hostConverted() holds, same dims and
  /// strides).
  void addConversion(const dnnl::memory &From, const dnnl::memory &To);
  /// Runs a conversion step on the OpenMP team.
  static void convert(const Step &S);
  /// inputIn, its buffers kernel-owned if \p Persistent, else transient.
  dnnl::memory inputIn(int Slot, const dnnl::memory::desc &Wanted,
                       bool Persistent);
  /// Gives \p Memory the next offset in this kernel's part of the device's
  /// scratch (bound by bindScratch).
  void placeTransient(const dnnl::memory &Memory);
  /// Makes room for this kernel in the device's scratch.
  void reserveScratch();
  /// Points the transient memory objects and scratchpads at the device's
  /// scratch if it grew since they last were (a check per call otherwise).
  void bindScratch() {
    if (BoundGeneration != Device.ScratchGeneration)
      rebindScratch();
  }
  void rebindScratch();

  fnn_device &Device;
  std::vector<dnnl::memory> Operands;
  std::vector<AlignedBuffer> Buffers;
  std::vector<Step> Steps;
  /// The transient memory objects and their offsets in the device's
  /// scratch; the scratchpad follows them, at TransientBytes.
  std::vector<std::pair<dnnl::memory, size_t>> Transients;
  size_t TransientBytes = 0;
  std::vector<dnnl::memory> ScratchpadMemories;
  size_t ScratchpadBytes = 0;
  /// The device's ScratchGeneration the memory objects point into.
  uint64_t BoundGeneration = UINT64_MAX;
  /// Whether the Once steps have run.
  bool Prepared = false;
  std::unique_ptr<KernelState> State;
};

/// runtime::createKernel for a CPU kernel: runs \p Build(Kernel, *Desc) on
/// a new CpuKernel, with oneDNN's errors given their status.
template <typename DescT, typename BuildFn, typename DescribeFn>
fnn_kernel *createKernel(const char *Function, fnn_device *Device,
                         const DescT *Desc, BuildFn Build,
                         DescribeFn Describe) {
  return runtime::createKernel(
      Function, Device, Desc,
      [&](const DescT &D) {
        auto Kernel = std::make_unique<CpuKernel>(*Device);
        try {
          Build(*Kernel, D);
        } catch (const dnnl::error &E) {
          throw KernelError(std::string("oneDNN: ") + E.what() + " (status " +
                            std::to_string(static_cast<int>(E.status)) + ")");
        }
        return Kernel;
      },
      Describe);
}

} // namespace fastnn::cpu

#endif // FASTNN_RUNTIME_KERNELS_CPU_KERNEL_H
