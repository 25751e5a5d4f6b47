//===- Kernel.cpp - CPU kernel state and oneDNN descriptors ---------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <algorithm>

using namespace fastnn::cpu;

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

bool fastnn::cpu::cpuHasAvx2() {
  static const bool Has = __builtin_cpu_supports("avx2");
  return Has;
}

bool fastnn::cpu::cpuHasAvx512() {
  static const bool Has =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return Has;
}

bool fastnn::cpu::cpuComputesBf16() {
  // oneDNN 2.6 has bfloat16 primitives only from AVX-512 (avx512_core) on;
  // asking it for one is the check that follows what the library does.
  static const bool Supported = [] {
    using dnnl::memory;
    try {
      dnnl::engine Engine(dnnl::engine::kind::cpu, 0);
      memory::desc Square({2, 2}, memory::data_type::bf16,
                          memory::format_tag::ab);
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(Square, Square, Square),
                                   Engine);
      return true;
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return Supported;
}

dnnl::memory::data_type fastnn::cpu::computeType(int64_t DType) {
  dnnl::memory::data_type Type = storageType(DType);
  if (Type == dnnl::memory::data_type::f16 ||
      (Type == dnnl::memory::data_type::bf16 && !cpuComputesBf16()))
    return dnnl::memory::data_type::f32;
  return Type;
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

void fastnn::cpu::appendActivation(dnnl::post_ops &Ops, int64_t PostOp) {
  switch (PostOp & FNN_POST_ACTIVATION_MASK) {
  case FNN_POST_RELU:
    Ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    break;
  case FNN_POST_RELU6:
    Ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 6.f);
    break;
  default:
    break;
  }
}

bool fastnn::cpu::winogradPays(const fnn_conv2d_desc &D, ConvPass Pass) {
  const runtime::Conv2dFilter F = runtime::conv2dFilter(D);
  const bool Nhwc = D.layout == FNN_NHWC;
  const int64_t OutHeight = D.output.dims[Nhwc ? 1 : 2],
                OutWidth = D.output.dims[Nhwc ? 2 : 3];
  const bool Enough = Pass == ConvPass::Forward ? F.In >= 48
                      : Pass == ConvPass::BackwardData
                          ? F.In >= 32 && F.Out >= 32
                          : F.Out >= 32;
  return D.dtype == FNN_F32 && D.groups == 1 && F.Height == 3 && F.Width == 3 &&
         D.strides[0] == 1 && D.strides[1] == 1 && D.dilations[0] == 1 &&
         D.dilations[1] == 1 && F.In % 16 == 0 && F.Out % 16 == 0 &&
         OutHeight >= 14 && OutWidth >= 14 && Enough;
}

dnnl::primitive_attr fastnn::cpu::makeAttr(const dnnl::post_ops &Ops) {
  dnnl::primitive_attr Attr;
  Attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (Ops.len() > 0)
    Attr.set_post_ops(Ops);
  return Attr;
}

dnnl::primitive_attr fastnn::cpu::makeAttr(int64_t PostOp) {
  dnnl::post_ops Ops;
  if (PostOp & FNN_POST_ACCUMULATE)
    Ops.append_sum(1.f);
  appendActivation(Ops, PostOp);
  return makeAttr(Ops);
}

void CpuKernel::addOperand(const dnnl::memory::desc &Desc) {
  Operands.emplace_back(Desc, Device.Engine,
                        static_cast<void *>(DNNL_MEMORY_NONE));
}

void fnn_device::reserveScratch(size_t Bytes) {
  if (Bytes <= ScratchBytes)
    return;
  Scratch = allocateAligned(Bytes);
  ScratchBytes = Bytes;
  ++ScratchGeneration;
}

dnnl::memory CpuKernel::addInternal(const dnnl::memory::desc &Desc) {
  Buffers.push_back(allocateAligned(Desc.get_size()));
  return dnnl::memory(Desc, Device.Engine, Buffers.back().get());
}

/// Offsets in the device's scratch keep each buffer on its own cache lines.
static size_t roundToCacheLine(size_t Bytes) { return (Bytes + 63) / 64 * 64; }

void CpuKernel::placeTransient(const dnnl::memory &Memory) {
  Transients.emplace_back(Memory, TransientBytes);
  TransientBytes += roundToCacheLine(Memory.get_desc().get_size());
  reserveScratch();
}

dnnl::memory CpuKernel::addTransient(const dnnl::memory::desc &Desc) {
  dnnl::memory Memory(Desc, Device.Engine,
                      static_cast<void *>(DNNL_MEMORY_NONE));
  placeTransient(Memory);
  return Memory;
}

void CpuKernel::addSpareOperand(const dnnl::memory::desc &Desc) {
  addOperand(Desc);
  placeTransient(Operands.back());
}

void CpuKernel::reserveScratch() {
  Device.reserveScratch(TransientBytes + ScratchpadBytes);
}

void CpuKernel::rebindScratch() {
  char *Base = static_cast<char *>(Device.Scratch.get());
  for (auto &[Memory, Offset] : Transients)
    Memory.set_data_handle(Base + Offset);
  for (dnnl::memory &M : ScratchpadMemories)
    M.set_data_handle(Base + TransientBytes);
  BoundGeneration = Device.ScratchGeneration;
}

void CpuKernel::addStep(const dnnl::primitive &Primitive,
                        const std::vector<std::pair<int, dnnl::memory>> &Args,
                        const dnnl::memory::desc &ScratchpadDesc) {
  Step S;
  S.Primitive = Primitive;
  for (const auto &[Arg, Memory] : Args) {
    S.Memories.push_back(Memory);
    S.Args.push_back({Arg, Memory.get()});
  }
  size_t Bytes = ScratchpadDesc.get_size();
  if (Bytes > 0) {
    ScratchpadBytes = std::max(ScratchpadBytes, Bytes);
    reserveScratch();
    ScratchpadMemories.emplace_back(ScratchpadDesc, Device.Engine,
                                    static_cast<void *>(DNNL_MEMORY_NONE));
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

/// Whether tensors of \p Desc's type are converted to float32 on the host
/// around the primitives (computeType differs from the storage type).
bool hostConverted(const dnnl::memory::desc &Desc) {
  dnnl::memory::data_type Type = Desc.data_type();
  return Type == dnnl::memory::data_type::f16 ||
         (Type == dnnl::memory::data_type::bf16 && !cpuComputesBf16());
}

} // namespace

void CpuKernel::addConversion(const dnnl::memory &From,
                              const dnnl::memory &To) {
  Step S;
  S.Memories = {From, To};
  bool FromFloat = hostConverted(To.get_desc());
  S.Direction = FromFloat ? Conversion::FromFloat : Conversion::ToFloat;
  S.Half = (FromFloat ? To : From).get_desc().data_type();
  S.Elements = From.get_desc().get_size() / (FromFloat ? 4 : 2);
  Steps.push_back(std::move(S));
}

void CpuKernel::addHostStep(const std::vector<dnnl::memory> &Memories,
                            std::function<void(void *const *)> Run) {
  if (Memories.size() > MaxHostStepMemories)
    throw KernelError("a host step takes at most " +
                      std::to_string(MaxHostStepMemories) + " memories");
  Step S;
  S.Memories = Memories;
  S.Host = std::move(Run);
  Steps.push_back(std::move(S));
}

void CpuKernel::convert(const Step &S) {
  void *FromHandle = nullptr, *ToHandle = nullptr;
  dnnl_memory_get_data_handle(S.Memories[0].get(), &FromHandle);
  dnnl_memory_get_data_handle(S.Memories[1].get(), &ToHandle);
  bool Bf16 = S.Half == dnnl::memory::data_type::bf16;
  int64_t Elements = static_cast<int64_t>(S.Elements);
  parallelFor(
      Elements, threadsForWork(Elements), [&](int64_t Begin, int64_t End, int) {
        if (S.Direction == Conversion::FromFloat) {
          const float *From = static_cast<const float *>(FromHandle);
          uint16_t *To = static_cast<uint16_t *>(ToHandle);
          if (Bf16)
            for (int64_t I = Begin; I < End; ++I)
              To[I] = runtime::floatToBfloat16(From[I]);
          else
            for (int64_t I = Begin; I < End; ++I)
              To[I] = runtime::floatToHalf(From[I]);
        } else {
          const uint16_t *From = static_cast<const uint16_t *>(FromHandle);
          float *To = static_cast<float *>(ToHandle);
          if (Bf16)
            for (int64_t I = Begin; I < End; ++I)
              To[I] = runtime::bfloat16ToFloat(From[I]);
          else
            for (int64_t I = Begin; I < End; ++I)
              To[I] = runtime::halfToFloat(From[I]);
        }
      });
}

dnnl::memory CpuKernel::inputIn(int Slot, const dnnl::memory::desc &Wanted) {
  return inputIn(Slot, Wanted, /*Persistent=*/false);
}

dnnl::memory CpuKernel::inputIn(int Slot, const dnnl::memory::desc &Wanted,
                                bool Persistent) {
  auto Buffer = [&](const dnnl::memory::desc &Desc) {
    return Persistent ? addInternal(Desc) : addTransient(Desc);
  };
  dnnl::memory Source = Operands[Slot];
  if (Source.get_desc() == Wanted)
    return Source;
  if (hostConverted(Source.get_desc()) && !hostConverted(Wanted)) {
    dnnl::memory Converted =
        Buffer(withType(Source.get_desc(), dnnl::memory::data_type::f32));
    addConversion(Source, Converted);
    if (Converted.get_desc() == Wanted)
      return Converted;
    Source = Converted;
  }
  dnnl::memory Internal = Buffer(Wanted);
  auto PD = reorderDesc(Device.Engine, Source.get_desc(), Wanted);
  addStep(dnnl::reorder(PD), {{DNNL_ARG_FROM, Source}, {DNNL_ARG_TO, Internal}},
          PD.scratchpad_desc());
  return Internal;
}

dnnl::memory CpuKernel::constantInputIn(int Slot,
                                        const dnnl::memory::desc &Wanted) {
  size_t First = Steps.size();
  dnnl::memory Copy = inputIn(Slot, Wanted, /*Persistent=*/true);
  for (size_t I = First; I < Steps.size(); ++I)
    Steps[I].Once = true;
  return Copy;
}

dnnl::memory CpuKernel::outputIn(int Slot, const dnnl::memory::desc &Produced) {
  const dnnl::memory &Operand = Operands[Slot];
  return Operand.get_desc() == Produced ? Operand : addTransient(Produced);
}

void CpuKernel::finishOutput(int Slot, const dnnl::memory &Produced) {
  const dnnl::memory &Operand = Operands[Slot];
  if (Produced.get() == Operand.get())
    return;
  dnnl::memory Target = Operand;
  if (hostConverted(Operand.get_desc()) &&
      !hostConverted(Produced.get_desc())) {
    dnnl::memory::desc Plain =
        withType(Operand.get_desc(), dnnl::memory::data_type::f32);
    Target = Produced.get_desc() == Plain ? Produced : addTransient(Plain);
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

void CpuKernel::bind(int Slot, const void *Data) {
  // oneDNN takes a non-const handle for inputs too; it does not write them.
  dnnl_status_t Status = dnnl_memory_set_data_handle_v2(
      Operands[Slot].get(), const_cast<void *>(Data), nullptr);
  if (Status != dnnl_success)
    setLastError("fnn kernel: could not bind operand " + std::to_string(Slot));
}

void *CpuKernel::orSpare(void *Data, int Spare) {
  if (Data)
    return Data;
  bindScratch();
  void *Handle = nullptr;
  dnnl_memory_get_data_handle(Operands[Spare].get(), &Handle);
  return Handle;
}

void CpuKernel::run(size_t Count) {
  bindScratch();
  for (size_t I = 0; I < Steps.size() && I < Count; ++I) {
    const Step &S = Steps[I];
    if (S.Once && Prepared)
      continue;
    if (S.Host) {
      void *Handles[MaxHostStepMemories] = {};
      for (size_t M = 0; M < S.Memories.size(); ++M)
        dnnl_memory_get_data_handle(S.Memories[M].get(), &Handles[M]);
      S.Host(Handles);
      continue;
    }
    if (!S.Primitive) {
      convert(S);
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
  Prepared = true;
}
