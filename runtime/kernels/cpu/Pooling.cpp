//===- Pooling.cpp - fnn_pool2d and its backward --------------------------===//
//
// NCHW and float16 pooling run on oneDNN's pooling_v2 (rather than pooling,
// because only v2 takes dilations); NHWC float32 and bfloat16 pooling on
// CPUs with AVX2 runs on the loops below (DirectPool).
//
// The oneDNN inference, training and backward kernels all derive their
// descriptor from the fnn_pool2d_desc the same way (poolingDesc), so the
// padding_r that encodes ceil mode, and with it every window, agrees between
// a forward and its backward. A training max-pooling kernel writes oneDNN's
// workspace (the argmax of each window) to a SavedWorkspace; its backward
// kernel shares that buffer.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <tuple>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots of the forward kernels, in the order buildForward() adds
/// them.
enum Slot { SrcSlot, DstSlot };
/// Operand slots of the backward kernel.
enum BackwardSlot { DiffDstSlot, DiffSrcSlot };

/// A training max-pooling kernel's state; its own type so that a backward
/// kernel is not made from another op's workspace.
struct PoolWorkspace final : SavedWorkspace {
  using SavedWorkspace::SavedWorkspace;
};

std::string describe(const fnn_pool2d_desc &D) {
  std::ostringstream S;
  S << "pool2d " << (D.kind == FNN_POOL_MAX ? "max" : "avg") << " input "
    << shapeText(D.input) << " " << layoutName(D.layout) << ", output "
    << shapeText(D.output) << ", kernel " << formatPair(D.kernel)
    << ", strides " << formatPair(D.strides) << ", pads " << D.pads[0] << ","
    << D.pads[1] << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations)
    << (D.kind == FNN_POOL_AVG && D.count_include_pad ? ", include pad" : "");
  return S.str();
}

/// The end padding that makes oneDNN's floor formula produce \p Out: ceil
/// mode is expressed as extra end padding. Any value in [Needed, Needed +
/// Stride - 1] gives the same windows; the given one is kept when it fits.
int64_t endPadding(int64_t In, int64_t Out, int64_t Range, int64_t Stride,
                   int64_t PadBegin, int64_t PadEnd) {
  int64_t Needed = (Out - 1) * Stride + Range - In - PadBegin;
  return std::min(std::max(PadEnd, Needed), Needed + Stride - 1);
}

dnnl::algorithm algorithm(const fnn_pool2d_desc &D) {
  return D.kind == FNN_POOL_MAX ? dnnl::algorithm::pooling_max
         : D.count_include_pad  ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding;
}

/// An operand as the kernel's caller stores it, and as the primitives take
/// it (float16 is converted to float32, see computeType).
memory::desc operandDesc(const fnn_pool2d_desc &D, const fnn_shape &Shape) {
  return activationDesc(Shape, D.layout, storageType(D.dtype));
}
memory::desc computeDesc(const fnn_pool2d_desc &D, const fnn_shape &Shape) {
  return activationDesc(Shape, D.layout, computeType(D.dtype));
}

/// Checks \p D and returns the forward descriptor every pooling kernel of
/// \p D is made from.
dnnl::pooling_v2_forward::desc poolingDesc(const fnn_pool2d_desc &D,
                                           dnnl::prop_kind PropKind) {
  fastnn::runtime::checkPool2dDesc(D);
  bool Nhwc = D.layout == FNN_NHWC;
  int H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;

  memory::dims PadR(2);
  for (int J = 0; J < 2; ++J) {
    int64_t Range = (D.kernel[J] - 1) * D.dilations[J] + 1;
    int Dim = J == 0 ? H : W;
    PadR[J] = endPadding(D.input.dims[Dim], D.output.dims[Dim], Range,
                         D.strides[J], D.pads[J], D.pads[J + 2]);
  }
  return dnnl::pooling_v2_forward::desc(
      PropKind, algorithm(D), computeDesc(D, D.input), computeDesc(D, D.output),
      {D.strides[0], D.strides[1]}, {D.kernel[0], D.kernel[1]},
      // oneDNN counts dilation from 0.
      {D.dilations[0] - 1, D.dilations[1] - 1}, {D.pads[0], D.pads[1]}, PadR);
}

/// NHWC pooling written here rather than run on oneDNN: oneDNN 2.6's NHWC
/// pooling (jit:avx512_core_bf16 and its float32 kernels) moves 2-4 GB/s on
/// two cores, where these loops over the contiguous channels, vectorised,
/// are 1.5-3x faster forward and 3x backward (Inception v3's and ResNet-50's
/// max pooling, bfloat16, 2 threads of an AVX-512 Xeon), and its bfloat16
/// average-pooling backward runs at ~2 GB/s. Semantics are the ABI's:
/// windows never read padding; max pooling keeps the first maximum in
/// window order (row by row), as max_pool2d_indices documents; average
/// pooling divides by the kernel area (count_include_pad) or by the number
/// of input elements covered. The backward gathers, for each input row, the
/// gradients of every window that covers it into a float32 row, in a fixed
/// order, and rounds once: the same bits on every run.
struct PoolGeometry {
  int64_t N, H, W, C, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW;
  bool Max, IncludePad;
};

/// A window that covers no input element (possible only in padding-heavy
/// descriptors); its max-pooling gradient goes nowhere.
constexpr uint8_t NoTap = 255;

/// The input rows (or columns) window \p O's taps read, counted.
inline int64_t tapsInside(int64_t O, int64_t Stride, int64_t Pad, int64_t K,
                          int64_t Dilation, int64_t In) {
  int64_t Count = 0;
  for (int64_t T = 0; T < K; ++T) {
    int64_t I = O * Stride - Pad + T * Dilation;
    Count += I >= 0 && I < In;
  }
  return Count;
}

/// Output rows [Begin, End) of N * OH; Acc and Best hold C values each.
template <typename T, bool SaveArg>
[[gnu::always_inline]] inline void
forwardRows(const PoolGeometry &G, const T *X, T *Y, uint8_t *Arg,
            int64_t Begin, int64_t End, float *Acc, uint8_t *Best) {
  const int64_t C = G.C;
  for (int64_t Row = Begin; Row < End; ++Row) {
    int64_t N = Row / G.OH, Oy = Row % G.OH;
    int64_t Rows = tapsInside(Oy, G.SH, G.PT, G.KH, G.DH, G.H);
    for (int64_t Ox = 0; Ox < G.OW; ++Ox) {
      bool First = true;
      for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
        int64_t Iy = Oy * G.SH - G.PT + Kh * G.DH;
        if (Iy < 0 || Iy >= G.H)
          continue;
        for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
          int64_t Ix = Ox * G.SW - G.PL + Kw * G.DW;
          if (Ix < 0 || Ix >= G.W)
            continue;
          const T *In = X + ((N * G.H + Iy) * G.W + Ix) * C;
          uint8_t Tap = static_cast<uint8_t>(Kh * G.KW + Kw);
          if (First) {
            for (int64_t I = 0; I < C; ++I)
              Acc[I] = widen(In[I]);
            if (SaveArg)
              for (int64_t I = 0; I < C; ++I)
                Best[I] = Tap;
          } else if (G.Max) {
            for (int64_t I = 0; I < C; ++I) {
              float V = widen(In[I]);
              bool Greater = V > Acc[I];
              Acc[I] = Greater ? V : Acc[I];
              if (SaveArg)
                Best[I] = Greater ? Tap : Best[I];
            }
          } else {
            for (int64_t I = 0; I < C; ++I)
              Acc[I] += widen(In[I]);
          }
          First = false;
        }
      }
      int64_t Out = ((N * G.OH + Oy) * G.OW + Ox) * C;
      if (First) {
        float Empty = G.Max ? -std::numeric_limits<float>::infinity() : 0.f;
        for (int64_t I = 0; I < C; ++I)
          narrow(Y[Out + I], Empty);
        if (SaveArg)
          std::fill(Arg + Out, Arg + Out + C, NoTap);
        continue;
      }
      if (G.Max) {
        for (int64_t I = 0; I < C; ++I)
          narrow(Y[Out + I], Acc[I]);
        if (SaveArg)
          std::copy(Best, Best + C, Arg + Out);
        continue;
      }
      float Divisor = static_cast<float>(
          G.IncludePad ? G.KH * G.KW
                       : Rows * tapsInside(Ox, G.SW, G.PL, G.KW, G.DW, G.W));
      for (int64_t I = 0; I < C; ++I)
        narrow(Y[Out + I], Acc[I] / Divisor);
    }
  }
}

/// Input rows [Begin, End) of N * H; Acc holds W * C floats and then C
/// more, for an average window's divided gradient.
template <typename T>
[[gnu::always_inline]] inline void
backwardRows(const PoolGeometry &G, const T *Dy, const uint8_t *Arg, T *Dx,
             int64_t Begin, int64_t End, float *Acc) {
  const int64_t C = G.C;
  float *Divided = Acc + G.W * C;
  for (int64_t Row = Begin; Row < End; ++Row) {
    int64_t N = Row / G.H, Iy = Row % G.H;
    std::fill(Acc, Acc + G.W * C, 0.f);
    for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
      int64_t Start = Iy + G.PT - Kh * G.DH;
      if (Start < 0 || Start % G.SH)
        continue;
      int64_t Oy = Start / G.SH;
      if (Oy >= G.OH)
        continue;
      int64_t Rows = tapsInside(Oy, G.SH, G.PT, G.KH, G.DH, G.H);
      for (int64_t Ox = 0; Ox < G.OW; ++Ox) {
        int64_t Out = ((N * G.OH + Oy) * G.OW + Ox) * C;
        const T *Grad = Dy + Out;
        if (!G.Max) {
          // Divided once per window row, not once per tap.
          float Divisor = static_cast<float>(
              G.IncludePad
                  ? G.KH * G.KW
                  : Rows * tapsInside(Ox, G.SW, G.PL, G.KW, G.DW, G.W));
          for (int64_t I = 0; I < C; ++I)
            Divided[I] = widen(Grad[I]) / Divisor;
        }
        for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
          int64_t Ix = Ox * G.SW - G.PL + Kw * G.DW;
          if (Ix < 0 || Ix >= G.W)
            continue;
          float *To = Acc + Ix * C;
          if (G.Max) {
            const uint8_t *Taps = Arg + Out;
            uint8_t Tap = static_cast<uint8_t>(Kh * G.KW + Kw);
            for (int64_t I = 0; I < C; ++I)
              To[I] += Taps[I] == Tap ? widen(Grad[I]) : 0.f;
          } else {
            for (int64_t I = 0; I < C; ++I)
              To[I] += Divided[I];
          }
        }
      }
    }
    T *Out = Dx + (N * G.H + Iy) * G.W * C;
    for (int64_t I = 0; I < G.W * C; ++I)
      narrow(Out[I], Acc[I]);
  }
}

using ForwardRowsFn = void (*)(const PoolGeometry &, const void *, void *,
                               uint8_t *, int64_t, int64_t, float *, uint8_t *);
using BackwardRowsFn = void (*)(const PoolGeometry &, const void *,
                                const uint8_t *, void *, int64_t, int64_t,
                                float *);

// The loops compiled for AVX-512 and for AVX2 (the build's baseline is
// x86-64, whose SSE2 loops are slower than oneDNN's).
template <typename T, bool SaveArg>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void
forwardRowsAvx512(const PoolGeometry &G, const void *X, void *Y, uint8_t *Arg,
                  int64_t Begin, int64_t End, float *Acc, uint8_t *Best) {
  forwardRows<T, SaveArg>(G, static_cast<const T *>(X), static_cast<T *>(Y),
                          Arg, Begin, End, Acc, Best);
}
template <typename T, bool SaveArg>
__attribute__((target("avx2"))) void
forwardRowsAvx2(const PoolGeometry &G, const void *X, void *Y, uint8_t *Arg,
                int64_t Begin, int64_t End, float *Acc, uint8_t *Best) {
  forwardRows<T, SaveArg>(G, static_cast<const T *>(X), static_cast<T *>(Y),
                          Arg, Begin, End, Acc, Best);
}
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void
backwardRowsAvx512(const PoolGeometry &G, const void *Dy, const uint8_t *Arg,
                   void *Dx, int64_t Begin, int64_t End, float *Acc) {
  backwardRows<T>(G, static_cast<const T *>(Dy), Arg, static_cast<T *>(Dx),
                  Begin, End, Acc);
}
template <typename T>
__attribute__((target("avx2"))) void
backwardRowsAvx2(const PoolGeometry &G, const void *Dy, const uint8_t *Arg,
                 void *Dx, int64_t Begin, int64_t End, float *Acc) {
  backwardRows<T>(G, static_cast<const T *>(Dy), Arg, static_cast<T *>(Dx),
                  Begin, End, Acc);
}

template <typename T, bool SaveArg> ForwardRowsFn forwardRowsFor() {
  return cpuHasAvx512() ? forwardRowsAvx512<T, SaveArg>
                        : forwardRowsAvx2<T, SaveArg>;
}
template <typename T> BackwardRowsFn backwardRowsFor() {
  return cpuHasAvx512() ? backwardRowsAvx512<T> : backwardRowsAvx2<T>;
}

/// Whether \p D runs on DirectPool (else on oneDNN).
bool runsDirect(const fnn_pool2d_desc &D) {
  return cpuHasAvx2() && D.layout == FNN_NHWC &&
         (D.dtype == FNN_F32 || D.dtype == FNN_BF16) &&
         D.kernel[0] * D.kernel[1] < NoTap;
}

/// A DirectPool kernel's state. A training max-pooling kernel's Argmax (the
/// tap of each output element's maximum) is shared with the backward
/// kernels made from it.
struct DirectPool final : KernelState {
  PoolGeometry Geometry;
  bool Bf16 = false;
  std::shared_ptr<uint8_t> Argmax;
  ForwardRowsFn Forward = nullptr;
  BackwardRowsFn Backward = nullptr;
  /// Per-thread float rows ((W + 1) * C floats) and argmax rows (C).
  int Threads = 1;
  int64_t RowFloats = 0;
  AlignedBuffer Floats, Taps;

  void forward(const void *X, void *Y) const {
    const PoolGeometry &G = Geometry;
    parallelFor(G.N * G.OH,
                std::min(Threads,
                         threadsForWork(G.N * G.OH * G.OW * G.KH * G.KW * G.C)),
                [&](int64_t Begin, int64_t End, int Thread) {
                  Forward(G, X, Y, Argmax.get(), Begin, End, rowFloats(Thread),
                          static_cast<uint8_t *>(Taps.get()) + Thread * G.C);
                });
  }
  void backward(const void *Dy, void *Dx) const {
    const PoolGeometry &G = Geometry;
    parallelFor(G.N * G.H,
                std::min(Threads,
                         threadsForWork(G.N * G.OH * G.OW * G.KH * G.KW * G.C)),
                [&](int64_t Begin, int64_t End, int Thread) {
                  Backward(G, Dy, Argmax.get(), Dx, Begin, End,
                           rowFloats(Thread));
                });
  }

private:
  float *rowFloats(int Thread) const {
    return static_cast<float *>(Floats.get()) + Thread * RowFloats;
  }
};

/// The DirectPool state for \p D (which runsDirect); oneDNN's descriptor is
/// made too, only for the checks it makes of the windows against the shapes.
std::unique_ptr<DirectPool>
makeDirectPool(CpuKernel &K, const fnn_pool2d_desc &D, bool Training) {
  dnnl::pooling_v2_forward::primitive_desc Check(
      poolingDesc(D, dnnl::prop_kind::forward_training),
      makeAttr(FNN_POST_NONE), K.device().Engine);
  auto P = std::make_unique<DirectPool>();
  PoolGeometry &G = P->Geometry;
  G = {D.input.dims[0],
       D.input.dims[1],
       D.input.dims[2],
       D.input.dims[3],
       D.output.dims[1],
       D.output.dims[2],
       D.kernel[0],
       D.kernel[1],
       D.strides[0],
       D.strides[1],
       D.pads[0],
       D.pads[1],
       D.dilations[0],
       D.dilations[1],
       D.kind == FNN_POOL_MAX,
       D.count_include_pad != 0};
  P->Bf16 = D.dtype == FNN_BF16;
  bool SaveArg = Training && G.Max;
  if (SaveArg) {
    int64_t Elements = G.N * G.OH * G.OW * G.C;
    P->Argmax = std::shared_ptr<uint8_t>(
        static_cast<uint8_t *>(allocateAligned(Elements).release()),
        AlignedFree());
    P->Forward = P->Bf16 ? forwardRowsFor<uint16_t, true>()
                         : forwardRowsFor<float, true>();
  } else {
    P->Forward = P->Bf16 ? forwardRowsFor<uint16_t, false>()
                         : forwardRowsFor<float, false>();
  }
  P->Backward =
      P->Bf16 ? backwardRowsFor<uint16_t>() : backwardRowsFor<float>();
  P->Threads = std::max(1, omp_get_max_threads());
  P->RowFloats = ((G.W + 1) * G.C + 15) / 16 * 16;
  P->Floats = allocateAligned(P->Threads * P->RowFloats * sizeof(float));
  P->Taps = allocateAligned(P->Threads * G.C);
  return P;
}

bool sameWindows(const PoolGeometry &A, const PoolGeometry &B) {
  auto Key = [](const PoolGeometry &G) {
    return std::make_tuple(G.N, G.H, G.W, G.C, G.OH, G.OW, G.KH, G.KW, G.SH,
                           G.SW, G.PT, G.PL, G.DH, G.DW, G.Max, G.IncludePad);
  };
  return Key(A) == Key(B);
}

void buildForward(CpuKernel &K, const fnn_pool2d_desc &D,
                  dnnl::prop_kind PropKind) {
  if (runsDirect(D)) {
    K.setState(
        makeDirectPool(K, D, PropKind == dnnl::prop_kind::forward_training));
    return;
  }
  dnnl::pooling_v2_forward::primitive_desc PD(
      poolingDesc(D, PropKind), makeAttr(FNN_POST_NONE), K.device().Engine);
  K.addOperand(operandDesc(D, D.input));
  K.addOperand(operandDesc(D, D.output));
  memory Dst = K.outputIn(DstSlot, PD.dst_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.inputIn(SrcSlot, PD.src_desc())}, {DNNL_ARG_DST, Dst}};
  // Only max pooling has a workspace, and only when training.
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0) {
    auto Saved =
        std::make_unique<PoolWorkspace>(K.device().Engine, WorkspaceDesc);
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    K.setState(std::move(Saved));
  }
  K.addStep(dnnl::pooling_v2_forward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DstSlot, Dst);
}

void buildInference(CpuKernel &K, const fnn_pool2d_desc &D) {
  buildForward(K, D, dnnl::prop_kind::forward_inference);
}

void buildTraining(CpuKernel &K, const fnn_pool2d_desc &D) {
  buildForward(K, D, dnnl::prop_kind::forward_training);
}

void buildBackward(CpuKernel &K, const fnn_pool2d_desc &D,
                   const CpuKernel *Forward) {
  if (runsDirect(D)) {
    std::unique_ptr<DirectPool> P = makeDirectPool(K, D, false);
    if (P->Geometry.Max) {
      const DirectPool *Saved =
          Forward ? Forward->findState<DirectPool>() : nullptr;
      if (!Saved || !Saved->Argmax)
        throw KernelError("max pooling's backward needs the kernel of its "
                          "forward, made by fnn_pool2d_train_create");
      if (&Forward->device() != &K.device())
        throw KernelError("the forward kernel belongs to another device");
      if (!sameWindows(Saved->Geometry, P->Geometry) || Saved->Bf16 != P->Bf16)
        throw KernelError("the forward kernel was made from a different "
                          "descriptor");
      P->Argmax = Saved->Argmax;
    }
    K.setState(std::move(P));
    return;
  }
  dnnl::pooling_v2_forward::desc ForwardDesc =
      poolingDesc(D, dnnl::prop_kind::forward_training);
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  dnnl::pooling_v2_forward::primitive_desc Hint(ForwardDesc, Attr, Engine);
  memory::desc SrcDesc = computeDesc(D, D.input);
  memory::desc DstDesc = computeDesc(D, D.output);
  dnnl::pooling_v2_backward::primitive_desc PD(
      // The forward's padding_r, for the same windows.
      dnnl::pooling_v2_backward::desc(
          algorithm(D), SrcDesc, DstDesc, {D.strides[0], D.strides[1]},
          {D.kernel[0], D.kernel[1]}, {D.dilations[0] - 1, D.dilations[1] - 1},
          {D.pads[0], D.pads[1]},
          {ForwardDesc.data.padding[1][0], ForwardDesc.data.padding[1][1]}),
      Attr, Engine, Hint);
  K.addOperand(operandDesc(D, D.output));
  K.addOperand(operandDesc(D, D.input));
  memory DiffSrc = K.outputIn(DiffSrcSlot, PD.diff_src_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_DIFF_DST, K.inputIn(DiffDstSlot, PD.diff_dst_desc())},
      {DNNL_ARG_DIFF_SRC, DiffSrc}};
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0) {
    // Max pooling routes each gradient to the argmax the forward kernel
    // saved on its last run.
    const PoolWorkspace *Saved =
        Forward ? Forward->findState<PoolWorkspace>() : nullptr;
    if (!Saved)
      throw KernelError("max pooling's backward needs the kernel of its "
                        "forward, made by fnn_pool2d_train_create");
    if (&Forward->device() != &K.device())
      throw KernelError("the forward kernel belongs to another device");
    if (Saved->Memory.get_desc() != WorkspaceDesc)
      throw KernelError("the forward kernel was made from a different "
                        "descriptor");
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    K.setState(std::make_unique<PoolWorkspace>(*Saved));
  }
  K.addStep(dnnl::pooling_v2_backward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DiffSrcSlot, DiffSrc);
}
} // namespace

extern "C" fnn_kernel *fnn_pool2d_create(fnn_device *Device,
                                         const fnn_pool2d_desc *Desc) {
  return createKernel("fnn_pool2d_create", Device, Desc, buildInference,
                      describe);
}

extern "C" fnn_kernel *fnn_pool2d_train_create(fnn_device *Device,
                                               const fnn_pool2d_desc *Desc) {
  return createKernel("fnn_pool2d_train_create", Device, Desc, buildTraining,
                      describe);
}

extern "C" void fnn_pool2d_forward(fnn_kernel *Handle, const void *Input,
                                   void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  if (const DirectPool *Direct = Kernel->findState<DirectPool>()) {
    Direct->forward(Input, Output);
    return;
  }
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}

extern "C" fnn_kernel *fnn_pool2d_backward_create(fnn_device *Device,
                                                  const fnn_pool2d_desc *Desc,
                                                  fnn_kernel *Forward) {
  return createKernel(
      "fnn_pool2d_backward_create", Device, Desc,
      [Forward](CpuKernel &K, const fnn_pool2d_desc &D) {
        buildBackward(K, D, CpuKernel::find(Forward));
      },
      describe);
}

extern "C" void fnn_pool2d_backward(fnn_kernel *Handle, const void *GradOutput,
                                    void *GradInput) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  if (const DirectPool *Direct = Kernel->findState<DirectPool>()) {
    Direct->backward(GradOutput, GradInput);
    return;
  }
  Kernel->bind(DiffDstSlot, GradOutput);
  Kernel->bind(DiffSrcSlot, GradInput);
  Kernel->run();
}
