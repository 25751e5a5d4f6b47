//===- Kernel.cpp - kernel state, descriptors and errors ------------------===//

#include "Kernel.h"

#include <sstream>

using namespace fastnn::cpu;

namespace {
// fnn_last_error is per thread, as errno is, so that two threads creating
// kernels do not read each other's failures.
thread_local std::string LastError;
thread_local const char *LastErrorFallback = nullptr;
} // namespace

void fastnn::cpu::setLastError(const std::string &Message) noexcept {
  try {
    LastError = Message;
    LastErrorFallback = nullptr;
  } catch (const std::exception &) {
    LastErrorFallback = "out of memory while recording an error";
  }
}

void fastnn::cpu::clearLastError() noexcept {
  LastError.clear();
  LastErrorFallback = nullptr;
}

extern "C" const char *fnn_last_error(void) {
  return LastErrorFallback ? LastErrorFallback : LastError.c_str();
}

AlignedBuffer fastnn::cpu::allocateAligned(size_t Bytes) {
  if (Bytes == 0)
    return nullptr;
  // std::aligned_alloc wants a size that is a multiple of the alignment.
  size_t Rounded = (Bytes + 63) / 64 * 64;
  void *P = std::aligned_alloc(64, Rounded);
  if (!P)
    throw std::bad_alloc();
  return AlignedBuffer(P);
}

fastnn::cpu::SavedWorkspace::SavedWorkspace(const dnnl::engine &Engine,
                                            const dnnl::memory::desc &Desc)
    : Buffer(allocateAligned(Desc.get_size()).release(), AlignedFree()),
      Memory(Desc, Engine, Buffer.get()) {}

dnnl::memory::dims fastnn::cpu::toDims(const fnn_shape &Shape) {
  return dnnl::memory::dims(Shape.dims, Shape.dims + Shape.rank);
}

static dnnl::memory::dims denseStrides(const dnnl::memory::dims &Dims) {
  dnnl::memory::dims Strides(Dims.size());
  int64_t Stride = 1;
  for (size_t I = Dims.size(); I-- > 0;) {
    Strides[I] = Stride;
    Stride *= Dims[I];
  }
  return Strides;
}

dnnl::memory::desc fastnn::cpu::denseDesc(const dnnl::memory::dims &Dims) {
  return dnnl::memory::desc(Dims, dnnl::memory::data_type::f32,
                            denseStrides(Dims));
}

dnnl::memory::desc fastnn::cpu::activationDesc(const fnn_shape &Shape,
                                               int64_t Layout) {
  dnnl::memory::dims Stored = toDims(Shape);
  if (Layout == FNN_NCHW || Stored.size() <= 2)
    return denseDesc(Stored);
  // NHWC: stored N, S..., C; oneDNN's logical order is N, C, S....
  dnnl::memory::dims StoredStrides = denseStrides(Stored);
  size_t Rank = Stored.size();
  dnnl::memory::dims Dims(Rank), Strides(Rank);
  Dims[0] = Stored[0];
  Strides[0] = StoredStrides[0];
  Dims[1] = Stored[Rank - 1];
  Strides[1] = StoredStrides[Rank - 1];
  for (size_t I = 1; I + 1 < Rank; ++I) {
    Dims[I + 1] = Stored[I];
    Strides[I + 1] = StoredStrides[I];
  }
  return dnnl::memory::desc(Dims, dnnl::memory::data_type::f32, Strides);
}

dnnl::primitive_attr fastnn::cpu::makeAttr(int64_t PostOp) {
  dnnl::primitive_attr Attr;
  Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (PostOp == FNN_POST_RELU) {
    dnnl::post_ops Ops;
    Ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    Attr.set_post_ops(Ops);
  }
  return Attr;
}

std::string fastnn::cpu::formatShape(const fnn_shape &Shape) {
  if (Shape.rank < 0 || Shape.rank > FNN_MAX_RANK)
    return "<rank " + std::to_string(Shape.rank) + ">";
  if (Shape.rank == 0)
    return "scalar";
  std::string S;
  for (int64_t I = 0; I < Shape.rank; ++I)
    S += (I ? "x" : "") + std::to_string(Shape.dims[I]);
  return S;
}

std::string fastnn::cpu::formatPair(const int64_t *Values, const char *Sep) {
  return std::to_string(Values[0]) + Sep + std::to_string(Values[1]);
}

const char *fastnn::cpu::layoutName(int64_t Layout) {
  return Layout == FNN_NHWC ? "NHWC" : Layout == FNN_NCHW ? "NCHW" : "?";
}

void fastnn::cpu::checkShape(const fnn_shape &Shape, const char *Name,
                             int64_t MinRank, int64_t MaxRank) {
  if (Shape.rank < MinRank || Shape.rank > MaxRank) {
    std::ostringstream S;
    S << Name << " has rank " << Shape.rank << ", expected ";
    if (MinRank == MaxRank)
      S << MinRank;
    else
      S << MinRank << " to " << MaxRank;
    throw KernelError(S.str());
  }
  for (int64_t I = 0; I < Shape.rank; ++I)
    if (Shape.dims[I] <= 0)
      throw KernelError(std::string(Name) + " has a non-positive dimension");
}

void fastnn::cpu::checkF32(int64_t DType) {
  if (DType != FNN_F32)
    throw KernelError("dtype " + std::to_string(DType) +
                      " is not supported on CPU yet (only FNN_F32; bf16 "
                      "arrives with mixed precision)");
}

void fastnn::cpu::checkLayout(int64_t Layout) {
  if (Layout != FNN_NCHW && Layout != FNN_NHWC)
    throw KernelError("unknown layout " + std::to_string(Layout));
}

void fastnn::cpu::checkPostOp(int64_t PostOp) {
  if (PostOp != FNN_POST_NONE && PostOp != FNN_POST_RELU)
    throw KernelError("unknown post-op " + std::to_string(PostOp));
}

void fnn_kernel::addOperand(const dnnl::memory::desc &Desc) {
  Operands.emplace_back(Desc, Device.Engine,
                        static_cast<void *>(DNNL_MEMORY_NONE));
}

dnnl::memory fnn_kernel::addInternal(const dnnl::memory::desc &Desc) {
  Buffers.push_back(allocateAligned(Desc.get_size()));
  return dnnl::memory(Desc, Device.Engine, Buffers.back().get());
}

void fnn_kernel::addStep(const dnnl::primitive &Primitive,
                         const std::vector<std::pair<int, dnnl::memory>> &Args,
                         const dnnl::memory::desc &ScratchpadDesc) {
  Step S{Primitive, {}, {}};
  for (const auto &[Arg, Memory] : Args) {
    S.Memories.push_back(Memory);
    S.Args.push_back({Arg, Memory.get()});
  }
  size_t Bytes = ScratchpadDesc.get_size();
  if (Bytes > 0) {
    if (Bytes > ScratchpadBytes) {
      Scratchpad = allocateAligned(Bytes);
      ScratchpadBytes = Bytes;
      for (dnnl::memory &M : ScratchpadMemories)
        M.set_data_handle(Scratchpad.get());
    }
    ScratchpadMemories.emplace_back(ScratchpadDesc, Device.Engine,
                                    Scratchpad.get());
    S.Memories.push_back(ScratchpadMemories.back());
    S.Args.push_back({DNNL_ARG_SCRATCHPAD, ScratchpadMemories.back().get()});
  }
  Steps.push_back(std::move(S));
}

/// Reorders never need a scratchpad for the layouts used here, but asking
/// for a user one keeps oneDNN from ever allocating one while executing.
static dnnl::reorder::primitive_desc reorderDesc(const dnnl::engine &Engine,
                                                 const dnnl::memory::desc &From,
                                                 const dnnl::memory::desc &To) {
  return dnnl::reorder::primitive_desc(Engine, From, Engine, To,
                                       makeAttr(FNN_POST_NONE));
}

dnnl::memory fnn_kernel::inputIn(int Slot, const dnnl::memory::desc &Wanted) {
  const dnnl::memory &Operand = Operands[Slot];
  if (Operand.get_desc() == Wanted)
    return Operand;
  dnnl::memory Internal = addInternal(Wanted);
  auto PD = reorderDesc(Device.Engine, Operand.get_desc(), Wanted);
  addStep(dnnl::reorder(PD),
          {{DNNL_ARG_FROM, Operand}, {DNNL_ARG_TO, Internal}},
          PD.scratchpad_desc());
  return Internal;
}

dnnl::memory fnn_kernel::outputIn(int Slot,
                                  const dnnl::memory::desc &Produced) {
  const dnnl::memory &Operand = Operands[Slot];
  return Operand.get_desc() == Produced ? Operand : addInternal(Produced);
}

void fnn_kernel::finishOutput(int Slot, const dnnl::memory &Produced) {
  const dnnl::memory &Operand = Operands[Slot];
  if (Produced.get() == Operand.get())
    return;
  auto PD = reorderDesc(Device.Engine, Produced.get_desc(), Operand.get_desc());
  addStep(dnnl::reorder(PD),
          {{DNNL_ARG_FROM, Produced}, {DNNL_ARG_TO, Operand}},
          PD.scratchpad_desc());
}

void fnn_kernel::bind(int Slot, const void *Data) {
  // oneDNN takes a non-const handle for inputs too; it does not write them.
  dnnl_status_t Status = dnnl_memory_set_data_handle_v2(
      Operands[Slot].get(), const_cast<void *>(Data), nullptr);
  if (Status != dnnl_success)
    setLastError("fnn kernel: could not bind operand " + std::to_string(Slot));
}

void fnn_kernel::run() {
  for (const Step &S : Steps) {
    dnnl_status_t Status =
        dnnl_primitive_execute(S.Primitive.get(), Device.Stream.get(),
                               static_cast<int>(S.Args.size()), S.Args.data());
    if (Status != dnnl_success) {
      setLastError("fnn kernel: oneDNN execution failed (status " +
                   std::to_string(static_cast<int>(Status)) + ")");
      return;
    }
  }
}

extern "C" void fnn_kernel_destroy(fnn_kernel *Kernel) { delete Kernel; }
