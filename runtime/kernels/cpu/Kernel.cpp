//===- Kernel.cpp - kernel state, descriptors and errors ------------------===//

#include "Kernel.h"

#include <cmath>
#include <cstring>
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

dnnl::memory::data_type fastnn::cpu::storageType(int64_t DType) {
  switch (DType) {
  case FNN_F32:
    return dnnl::memory::data_type::f32;
  case FNN_BF16:
    return dnnl::memory::data_type::bf16;
  case FNN_F16:
    return dnnl::memory::data_type::f16;
  default:
    throw KernelError("dtype " + std::to_string(DType) +
                      " is not a floating-point type the kernels take");
  }
}

dnnl::memory::data_type fastnn::cpu::computeType(int64_t DType) {
  dnnl::memory::data_type Type = storageType(DType);
  return Type == dnnl::memory::data_type::f16 ? dnnl::memory::data_type::f32
                                              : Type;
}

dnnl::memory::desc fastnn::cpu::withType(const dnnl::memory::desc &Desc,
                                         dnnl::memory::data_type Type) {
  dnnl::memory::desc Result = Desc;
  Result.data.data_type = static_cast<dnnl_data_type_t>(Type);
  return Result;
}

dnnl::memory::desc fastnn::cpu::denseDesc(const dnnl::memory::dims &Dims,
                                          dnnl::memory::data_type Type) {
  return dnnl::memory::desc(Dims, Type, denseStrides(Dims));
}

dnnl::memory::desc fastnn::cpu::activationDesc(const fnn_shape &Shape,
                                               int64_t Layout,
                                               dnnl::memory::data_type Type) {
  dnnl::memory::dims Stored = toDims(Shape);
  if (Layout == FNN_NCHW || Stored.size() <= 2)
    return denseDesc(Stored, Type);
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
  return dnnl::memory::desc(Dims, Type, Strides);
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
                      " is not supported by this kernel (only FNN_F32; "
                      "mixed precision keeps this op in float32)");
}

void fastnn::cpu::checkFloatType(int64_t DType) {
  if (DType != FNN_F32 && DType != FNN_BF16 && DType != FNN_F16)
    throw KernelError("dtype " + std::to_string(DType) +
                      " is not supported (FNN_F32, FNN_BF16 or FNN_F16)");
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

namespace {

bool isHalf(const dnnl::memory::desc &Desc) {
  return Desc.data_type() == dnnl::memory::data_type::f16;
}

/// float16 bits to float, exactly (every half is a float).
float halfToFloat(uint16_t Half) {
  uint32_t Sign = static_cast<uint32_t>(Half & 0x8000u) << 16;
  uint32_t Exponent = (Half >> 10) & 0x1fu;
  uint32_t Mantissa = Half & 0x3ffu;
  uint32_t Bits;
  if (Exponent == 0x1f) {
    Bits = Sign | 0x7f800000u | (Mantissa << 13);
  } else if (Exponent != 0) {
    Bits = Sign | ((Exponent + 112) << 23) | (Mantissa << 13);
  } else {
    // Zero or subnormal: the mantissa times 2^-24, exact in float.
    float Value = static_cast<float>(Mantissa) * (1.0f / 16777216.0f);
    std::memcpy(&Bits, &Value, 4);
    Bits |= Sign;
  }
  float Result;
  std::memcpy(&Result, &Bits, 4);
  return Result;
}

/// float to float16 bits, rounding to nearest even; overflow gives infinity
/// (as the hardware conversion does), NaN stays NaN.
uint16_t floatToHalf(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  uint32_t Magnitude = Bits & 0x7fffffffu;
  if (Magnitude > 0x7f800000u)
    return static_cast<uint16_t>(Sign | 0x7e00u);
  if (Magnitude >= 0x477ff000u) // rounds to >= 65520: infinity
    return static_cast<uint16_t>(Sign | 0x7c00u);
  if (Magnitude < 0x38800000u) {
    // Subnormal half (or zero): round Magnitude * 2^24 to an integer.
    float Abs;
    std::memcpy(&Abs, &Magnitude, 4);
    return static_cast<uint16_t>(
        Sign | static_cast<uint32_t>(std::nearbyint(Abs * 16777216.0f)));
  }
  uint32_t Rounded = Magnitude + 0xfffu + ((Magnitude >> 13) & 1u);
  return static_cast<uint16_t>(Sign | ((Rounded - 0x38000000u) >> 13));
}

} // namespace

void fnn_kernel::addConversion(const dnnl::memory &From,
                               const dnnl::memory &To) {
  Step S;
  S.Memories = {From, To};
  S.ToHalf = isHalf(To.get_desc());
  S.Elements = From.get_desc().get_size() / (S.ToHalf ? 4 : 2);
  Steps.push_back(std::move(S));
}

dnnl::memory fnn_kernel::inputIn(int Slot, const dnnl::memory::desc &Wanted) {
  dnnl::memory Source = Operands[Slot];
  if (Source.get_desc() == Wanted)
    return Source;
  if (isHalf(Source.get_desc()) && !isHalf(Wanted)) {
    dnnl::memory Converted =
        addInternal(withType(Source.get_desc(), dnnl::memory::data_type::f32));
    addConversion(Source, Converted);
    if (Converted.get_desc() == Wanted)
      return Converted;
    Source = Converted;
  }
  dnnl::memory Internal = addInternal(Wanted);
  auto PD = reorderDesc(Device.Engine, Source.get_desc(), Wanted);
  addStep(dnnl::reorder(PD), {{DNNL_ARG_FROM, Source}, {DNNL_ARG_TO, Internal}},
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
  dnnl::memory Target = Operand;
  if (isHalf(Operand.get_desc()) && !isHalf(Produced.get_desc())) {
    dnnl::memory::desc Plain =
        withType(Operand.get_desc(), dnnl::memory::data_type::f32);
    Target = Produced.get_desc() == Plain ? Produced : addInternal(Plain);
  }
  if (Target.get() != Produced.get()) {
    auto PD =
        reorderDesc(Device.Engine, Produced.get_desc(), Target.get_desc());
    addStep(dnnl::reorder(PD),
            {{DNNL_ARG_FROM, Produced}, {DNNL_ARG_TO, Target}},
            PD.scratchpad_desc());
  }
  if (Target.get() != Operand.get())
    addConversion(Target, Operand);
}

void fnn_kernel::bind(int Slot, const void *Data) {
  // oneDNN takes a non-const handle for inputs too; it does not write them.
  dnnl_status_t Status = dnnl_memory_set_data_handle_v2(
      Operands[Slot].get(), const_cast<void *>(Data), nullptr);
  if (Status != dnnl_success)
    setLastError("fnn kernel: could not bind operand " + std::to_string(Slot));
}

void fnn_kernel::run(size_t Count) {
  for (size_t I = 0; I < Steps.size() && I < Count; ++I) {
    const Step &S = Steps[I];
    if (!S.Primitive) {
      void *From = nullptr, *To = nullptr;
      dnnl_memory_get_data_handle(S.Memories[0].get(), &From);
      dnnl_memory_get_data_handle(S.Memories[1].get(), &To);
      if (S.ToHalf)
        for (size_t I = 0; I < S.Elements; ++I)
          static_cast<uint16_t *>(To)[I] =
              floatToHalf(static_cast<const float *>(From)[I]);
      else
        for (size_t I = 0; I < S.Elements; ++I)
          static_cast<float *>(To)[I] =
              halfToFloat(static_cast<const uint16_t *>(From)[I]);
      continue;
    }
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
