//===- Normalization.cpp - fnn_batch_norm and fnn_lrn ---------------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order the builders add them.
/// Scale, shift, mean and variance are read by forward itself (see
/// BatchNormFold), so only the data has operand slots.
enum BatchNormSlot { BnSrcSlot, BnDstSlot };
enum LrnSlot { LrnSrcSlot, LrnDstSlot };
enum LrnBackwardSlot { LrnBwSrcSlot, LrnBwDiffDstSlot, LrnBwDiffSrcSlot };

/// The hand-written LRN. oneDNN 2.6 has jit LRN kernels only for size 5
/// (and, with AVX-512, for channels-last of any size); elsewhere it runs
/// lrn_ref, which takes ~35 ms per forward and ~150 ms per backward for
/// cifarnet's size-9 LRN (64x64x16x16 NCHW, 2 threads), most of a training
/// step. These kernels replace lrn_ref, and the channels-last jit backward
/// where that is wrong (see useNativeBackward). Semantics as lrnDesc's:
/// window W(i) of (size - 1) / 2 channels each side, clipped at the edges,
///   s_i = bias + alpha / size * sum_{j in W(i)} x_j^2,  y_i = x_i s_i^-beta,
///   dx_i = dy_i s_i^-beta - 2 alpha beta / size * x_i
///                           * sum_{j in W(i)} dy_j x_j s_j^(-beta-1)
/// (the window is symmetric: i in W(j) iff j in W(i)). Window sums are taken
/// directly (size adds per element, in float, in channel order as lrn_ref
/// does), not as running sums. The backward recomputes s from its input.
struct LrnNative {
  bool Enabled = false;
  /// Channels contiguous (NHWC, or NCHW with one pixel).
  bool ChannelsLast = false;
  int64_t Images = 0, Channels = 0, Pixels = 0, Half = 0;
  float Coef = 0, Beta = 0, Bias = 0, GradCoef = 0;
  /// At most this many OpenMP threads (what Scratch is sized for).
  int Threads = 1;
  /// Backward only: per-thread scratch of ScratchFloats floats each, owned
  /// by the kernel.
  float *Scratch = nullptr;
  int64_t ScratchFloats = 0;
  /// Pixels per NCHW backward tile.
  int64_t Block = 1;
};

/// An inference LRN kernel's state.
struct LrnInference final : KernelState {
  LrnNative Native;
};

/// A training LRN kernel's state (oneDNN's workspace holds the per-element
/// denominator); its own type so that a backward kernel is not made from
/// another op's workspace.
struct LrnWorkspace final : SavedWorkspace {
  using SavedWorkspace::SavedWorkspace;
  LrnNative Native;
};

const LrnNative &lrnNative(const CpuKernel &K) {
  if (const LrnWorkspace *W = K.findState<LrnWorkspace>())
    return W->Native;
  return K.state<LrnInference>().Native;
}

/// Whether oneDNN picked its reference implementation ("ref:any").
bool isReference(const char *ImplInfo) {
  return std::strstr(ImplInfo, "ref") != nullptr;
}

int64_t lrnChannels(const fnn_lrn_desc &D) {
  return D.input.dims[D.layout == FNN_NHWC ? 3 : 1];
}

/// Whether the backward of \p D is hand-written where oneDNN picked
/// \p ImplInfo: its reference one, and its AVX-512 channels-last jit one
/// for sizes other than 3 and 5 unless the channel count is a multiple of
/// 16 (oneDNN 2.6's gradient is wrong for size >= 7 with more than 16
/// channels that are not a multiple of 16, and it crashes generating code
/// for size 1). Its forward is right for every size.
bool useNativeBackward(const fnn_lrn_desc &D, const char *ImplInfo) {
  if (isReference(ImplInfo))
    return true;
  return D.size != 3 && D.size != 5 && lrnChannels(D) % 16 != 0;
}

/// Pixels per register-held vector of window sums on NCHW.
constexpr int64_t Lanes = 16;
/// Channels per stack-held vector of window sums on NHWC.
constexpr int64_t Chunk = 64;

LrnNative makeLrnNative(const fnn_lrn_desc &D) {
  LrnNative L;
  L.Enabled = true;
  L.Images = D.input.dims[0];
  L.Channels = lrnChannels(D);
  L.Pixels = D.layout == FNN_NHWC ? D.input.dims[1] * D.input.dims[2]
                                  : D.input.dims[2] * D.input.dims[3];
  // With one pixel both layouts are the same memory.
  L.ChannelsLast = D.layout == FNN_NHWC || L.Pixels == 1;
  L.Half = (D.size - 1) / 2;
  L.Coef = static_cast<float>(D.alpha / D.size);
  L.Beta = static_cast<float>(D.beta);
  L.Bias = static_cast<float>(D.bias);
  L.GradCoef = static_cast<float>(2 * D.alpha * D.beta / D.size);
  L.Threads = std::max(1, omp_get_max_threads());
  // Two C x Block scratch arrays of ~64 KiB each: whole 16x16 planes for
  // cifarnet's 64 channels (smaller tiles, with rows H*W apart, thrash L1).
  L.Block = std::min<int64_t>(
      L.Pixels, std::max<int64_t>(Lanes, 16384 / L.Channels / Lanes * Lanes));
  return L;
}

/// Calls Run(NegPow) with NegPow(s) = s^-beta, special-cased for the common
/// betas so that the loops vectorise (0.75: 1 / (sqrt(s) * sqrt(sqrt(s)))).
template <typename RunT> void withNegPow(float Beta, const RunT &Run) {
  if (Beta == 0.75f)
    Run([](float S) {
      float R = std::sqrt(S);
      return 1.f / (R * std::sqrt(R));
    });
  else if (Beta == 0.5f)
    Run([](float S) { return 1.f / std::sqrt(S); });
  else if (Beta == 1.f)
    Run([](float S) { return 1.f / S; });
  else
    Run([Beta](float S) { return std::pow(S, -Beta); });
}

/// Calls Body(I0, Len) over [0, Count) in pieces of at most Lanes, Len a
/// compile-time constant for the full ones so that their sums stay in
/// registers.
template <typename BodyT>
inline void forLanes(int64_t Count, const BodyT &Body) {
  int64_t I0 = 0;
  for (; I0 + Lanes <= Count; I0 += Lanes)
    Body(I0, std::integral_constant<int64_t, Lanes>());
  if (I0 < Count)
    Body(I0, Count - I0);
}

/// NCHW forward: per image and channel, over the pixels.
template <typename NegPowT>
void lrnForwardNchw(const LrnNative &L, const float *X, float *Y,
                    NegPowT NegPow) {
  const int64_t C = L.Channels, P = L.Pixels;
  parallelFor(L.Images * C, L.Threads, [&](int64_t Begin, int64_t End, int) {
    for (int64_t Item = Begin; Item < End; ++Item) {
      int64_t Channel = Item % C;
      const float *Image = X + (Item - Channel) * P, *Xc = X + Item * P;
      float *Yc = Y + Item * P;
      int64_t Lo = std::max<int64_t>(0, Channel - L.Half),
              Hi = std::min(C - 1, Channel + L.Half);
      forLanes(P, [&](int64_t P0, auto Len) {
        float Acc[Lanes] = {};
        for (int64_t J = Lo; J <= Hi; ++J) {
          const float *Xj = Image + J * P + P0;
          for (int64_t I = 0; I < Len; ++I)
            Acc[I] += Xj[I] * Xj[I];
        }
        // Through a local array, so that the stores need not wait for
        // the loads of the next lanes (Y could alias X for the compiler).
        float Out[Lanes];
        for (int64_t I = 0; I < Len; ++I)
          Out[I] = Xc[P0 + I] * NegPow(L.Bias + L.Coef * Acc[I]);
        for (int64_t I = 0; I < Len; ++I)
          Yc[P0 + I] = Out[I];
      });
    }
  });
}

/// NHWC forward: per pixel, over the channels.
template <typename NegPowT>
void lrnForwardNhwc(const LrnNative &L, const float *X, float *Y,
                    NegPowT NegPow) {
  const int64_t C = L.Channels;
  parallelFor(
      L.Images * L.Pixels, L.Threads, [&](int64_t Begin, int64_t End, int) {
        float Acc[Chunk];
        for (int64_t Item = Begin; Item < End; ++Item) {
          const float *Xp = X + Item * C;
          float *Yp = Y + Item * C;
          for (int64_t C0 = 0; C0 < C; C0 += Chunk) {
            int64_t Len = std::min(Chunk, C - C0);
            for (int64_t I = 0; I < Len; ++I)
              Acc[I] = 0;
            // Channel c adds x[c + K], for the c with 0 <= c + K < C.
            for (int64_t K = -L.Half; K <= L.Half; ++K) {
              int64_t Lo = std::max(C0, -K), Hi = std::min(C0 + Len, C - K);
              for (int64_t Ch = Lo; Ch < Hi; ++Ch)
                Acc[Ch - C0] += Xp[Ch + K] * Xp[Ch + K];
            }
            for (int64_t I = 0; I < Len; ++I)
              Yp[C0 + I] = Xp[C0 + I] * NegPow(L.Bias + L.Coef * Acc[I]);
          }
        }
      });
}

/// NCHW backward: per image and block of Block pixels, s^-beta and
/// t = dy x s^(-beta-1) of every channel into the thread's scratch, then dx.
template <typename NegPowT>
void lrnBackwardNchw(const LrnNative &L, const float *X, const float *Dy,
                     float *Dx, NegPowT NegPow) {
  const int64_t C = L.Channels, P = L.Pixels, B = L.Block;
  const int64_t Blocks = (P + B - 1) / B;
  parallelFor(L.Images * Blocks, L.Threads,
              [&](int64_t Begin, int64_t End, int Thread) {
                float *S = L.Scratch + Thread * L.ScratchFloats;
                float *T = S + C * B, *Acc = T + C * B;
                for (int64_t Item = Begin; Item < End; ++Item) {
                  int64_t P0 = Item % Blocks * B, Len = std::min(B, P - P0);
                  int64_t Offset = Item / Blocks * C * P + P0;
                  const float *Xb = X + Offset, *Dyb = Dy + Offset;
                  float *Dxb = Dx + Offset;
                  for (int64_t Ch = 0; Ch < C; ++Ch) {
                    int64_t Lo = std::max<int64_t>(0, Ch - L.Half),
                            Hi = std::min(C - 1, Ch + L.Half);
                    float *Sc = S + Ch * B, *Tc = T + Ch * B;
                    forLanes(Len, [&](int64_t I0, auto N) {
                      float Sums[Lanes] = {};
                      for (int64_t J = Lo; J <= Hi; ++J) {
                        const float *Xj = Xb + J * P + I0;
                        for (int64_t I = 0; I < N; ++I)
                          Sums[I] += Xj[I] * Xj[I];
                      }
                      for (int64_t I = 0; I < N; ++I)
                        Sc[I0 + I] = Sums[I];
                    });
                    const float *Xc = Xb + Ch * P, *Dyc = Dyb + Ch * P;
                    for (int64_t I = 0; I < Len; ++I) {
                      float Sum = L.Bias + L.Coef * Sc[I];
                      float Scale = NegPow(Sum);
                      Sc[I] = Scale;
                      Tc[I] = Dyc[I] * Xc[I] * Scale / Sum;
                    }
                  }
                  for (int64_t Ch = 0; Ch < C; ++Ch) {
                    int64_t Lo = std::max<int64_t>(0, Ch - L.Half),
                            Hi = std::min(C - 1, Ch + L.Half);
                    forLanes(Len, [&](int64_t I0, auto N) {
                      float Sums[Lanes] = {};
                      for (int64_t J = Lo; J <= Hi; ++J) {
                        const float *Tj = T + J * B + I0;
                        for (int64_t I = 0; I < N; ++I)
                          Sums[I] += Tj[I];
                      }
                      for (int64_t I = 0; I < N; ++I)
                        Acc[I0 + I] = Sums[I];
                    });
                    const float *Xc = Xb + Ch * P, *Dyc = Dyb + Ch * P,
                                *Sc = S + Ch * B;
                    float *Dxc = Dxb + Ch * P;
                    for (int64_t I = 0; I < Len; ++I)
                      Dxc[I] = Dyc[I] * Sc[I] - L.GradCoef * Xc[I] * Acc[I];
                  }
                }
              });
}

/// NHWC backward: per pixel, s^-beta, t and the window sums of t over the
/// channels in the thread's scratch, then dx.
template <typename NegPowT>
void lrnBackwardNhwc(const LrnNative &L, const float *X, const float *Dy,
                     float *Dx, NegPowT NegPow) {
  const int64_t C = L.Channels;
  parallelFor(L.Images * L.Pixels, L.Threads,
              [&](int64_t Begin, int64_t End, int Thread) {
                float *S = L.Scratch + Thread * L.ScratchFloats;
                float *T = S + C, *Acc = T + C;
                for (int64_t Item = Begin; Item < End; ++Item) {
                  const float *Xp = X + Item * C, *Dyp = Dy + Item * C;
                  float *Dxp = Dx + Item * C;
                  for (int64_t Ch = 0; Ch < C; ++Ch)
                    S[Ch] = 0;
                  for (int64_t K = -L.Half; K <= L.Half; ++K) {
                    int64_t Lo = std::max<int64_t>(0, -K),
                            Hi = std::min(C, C - K);
                    for (int64_t Ch = Lo; Ch < Hi; ++Ch)
                      S[Ch] += Xp[Ch + K] * Xp[Ch + K];
                  }
                  for (int64_t Ch = 0; Ch < C; ++Ch) {
                    float Sum = L.Bias + L.Coef * S[Ch];
                    float Scale = NegPow(Sum);
                    S[Ch] = Scale;
                    T[Ch] = Dyp[Ch] * Xp[Ch] * Scale / Sum;
                    Acc[Ch] = 0;
                  }
                  for (int64_t K = -L.Half; K <= L.Half; ++K) {
                    int64_t Lo = std::max<int64_t>(0, -K),
                            Hi = std::min(C, C - K);
                    for (int64_t Ch = Lo; Ch < Hi; ++Ch)
                      Acc[Ch] += T[Ch + K];
                  }
                  for (int64_t Ch = 0; Ch < C; ++Ch)
                    Dxp[Ch] = Dyp[Ch] * S[Ch] - L.GradCoef * Xp[Ch] * Acc[Ch];
                }
              });
}

void lrnForwardNative(const LrnNative &L, const float *X, float *Y) {
  withNegPow(L.Beta, [&](auto NegPow) {
    if (L.ChannelsLast)
      lrnForwardNhwc(L, X, Y, NegPow);
    else
      lrnForwardNchw(L, X, Y, NegPow);
  });
}

void lrnBackwardNative(const LrnNative &L, const float *X, const float *Dy,
                       float *Dx) {
  withNegPow(L.Beta, [&](auto NegPow) {
    if (L.ChannelsLast)
      lrnBackwardNhwc(L, X, Dy, Dx, NegPow);
    else
      lrnBackwardNchw(L, X, Dy, Dx, NegPow);
  });
}

std::string describeBatchNorm(const fnn_batch_norm_desc &D) {
  std::ostringstream S;
  S << "batch_norm input " << shapeText(D.input) << " " << layoutName(D.layout)
    << ", epsilon " << D.epsilon << fastnn::runtime::postOpText(D.post_op);
  return S.str();
}

/// Inference batch norm is a per-channel affine map, y = x * A + B with
/// A = scale / sqrt(variance + epsilon) and B = shift - mean * A. oneDNN
/// 2.6's batch norm on plain NCHW is its C++ reference-style ncsp_bnorm
/// (~5 GB/s here, ~100 ms of a resnet_v1_50 batch-8 forward), and its jit
/// one wants nChw16c (two reorders around it cost more than the op). So
/// forward folds the four C-element vectors into A and B (O(C) in our code)
/// and a jit binary primitive computes x * A on the operand's own layout,
/// with B added and the ReLU applied as post-ops in the same pass.
struct BatchNormFold : KernelState {
  int64_t Channels = 0;
  double Epsilon = 0;
  float *A = nullptr, *B = nullptr;
};

void buildBatchNorm(CpuKernel &K, const fnn_batch_norm_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  fastnn::runtime::checkReluPostOp(D.post_op, "batch_norm");
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  // Low-precision activations with float32 A and B (see computeType for
  // float16).
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ComputeDesc = withType(DataDesc, computeType(D.dtype));
  memory::dims ChannelDims(DataDesc.dims().size(), 1);
  ChannelDims[1] = DataDesc.dims()[1];
  memory::desc ChannelDesc = denseDesc(ChannelDims);

  dnnl::post_ops Ops;
  Ops.append_binary(dnnl::algorithm::binary_add, ChannelDesc);
  if (D.post_op == FNN_POST_RELU)
    Ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  Attr.set_post_ops(Ops);
  dnnl::binary::primitive_desc PD(
      dnnl::binary::desc(dnnl::algorithm::binary_mul, ComputeDesc, ChannelDesc,
                         ComputeDesc),
      Attr, K.device().Engine);

  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  memory A = K.addInternal(ChannelDesc), B = K.addInternal(ChannelDesc);
  memory Src = K.inputIn(BnSrcSlot, ComputeDesc);
  memory Dst = K.outputIn(BnDstSlot, ComputeDesc);
  K.addStep(dnnl::binary(PD),
            {{DNNL_ARG_SRC_0, Src},
             {DNNL_ARG_SRC_1, A},
             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, B},
             {DNNL_ARG_DST, Dst}},
            PD.scratchpad_desc());
  K.finishOutput(BnDstSlot, Dst);
  auto Fold = std::make_unique<BatchNormFold>();
  Fold->Channels = ChannelDims[1];
  Fold->Epsilon = D.epsilon;
  Fold->A = static_cast<float *>(A.get_data_handle());
  Fold->B = static_cast<float *>(B.get_data_handle());
  K.setState(std::move(Fold));
}

/// Checks \p D and returns the forward descriptor every LRN kernel of \p D
/// is made from.
dnnl::lrn_forward::desc lrnDesc(const fnn_lrn_desc &D,
                                dnnl::prop_kind PropKind) {
  fastnn::runtime::checkLrnDesc(D);
  // oneDNN computes x / (k + alpha / size * sum x^2)^beta, already dividing
  // alpha by the window size as ONNX does, so alpha passes through as is.
  return dnnl::lrn_forward::desc(
      PropKind, dnnl::algorithm::lrn_across_channels,
      activationDesc(D.input, D.layout), D.size, static_cast<float>(D.alpha),
      static_cast<float>(D.beta), static_cast<float>(D.bias));
}

void buildLrnForward(CpuKernel &K, const fnn_lrn_desc &D,
                     dnnl::prop_kind PropKind) {
  dnnl::lrn_forward::primitive_desc PD(
      lrnDesc(D, PropKind), makeAttr(FNN_POST_NONE), K.device().Engine);
  LrnNative Native;
  if (isReference(PD.impl_info_str()))
    Native = makeLrnNative(D);
  if (PropKind != dnnl::prop_kind::forward_training) {
    auto State = std::make_unique<LrnInference>();
    State->Native = Native;
    K.setState(std::move(State));
  }
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(LrnSrcSlot)},
      {DNNL_ARG_DST, K.operand(LrnDstSlot)}};
  // Training keeps the workspace its backward reads. Some implementations
  // (oneDNN's reference one, which the hand-written one replaces) have none
  // and recompute; the state is set regardless, so that the backward checks
  // its forward kernel the same way on every machine.
  if (PropKind == dnnl::prop_kind::forward_training) {
    auto Saved =
        std::make_unique<LrnWorkspace>(K.device().Engine, PD.workspace_desc());
    if (Saved->Memory.get_desc().get_size() > 0)
      Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    Saved->Native = Native;
    K.setState(std::move(Saved));
  }
  if (!Native.Enabled)
    K.addStep(dnnl::lrn_forward(PD), Args, PD.scratchpad_desc());
}

void buildLrn(CpuKernel &K, const fnn_lrn_desc &D) {
  buildLrnForward(K, D, dnnl::prop_kind::forward_inference);
}

void buildLrnTraining(CpuKernel &K, const fnn_lrn_desc &D) {
  buildLrnForward(K, D, dnnl::prop_kind::forward_training);
}

void buildLrnBackward(CpuKernel &K, const fnn_lrn_desc &D,
                      const CpuKernel *Forward) {
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  dnnl::lrn_forward::primitive_desc Hint(
      lrnDesc(D, dnnl::prop_kind::forward_training), Attr, Engine);
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  dnnl::lrn_backward::primitive_desc PD(
      dnnl::lrn_backward::desc(dnnl::algorithm::lrn_across_channels, DataDesc,
                               DataDesc, D.size, static_cast<float>(D.alpha),
                               static_cast<float>(D.beta),
                               static_cast<float>(D.bias)),
      Attr, Engine, Hint);
  const LrnWorkspace *Saved =
      Forward ? Forward->findState<LrnWorkspace>() : nullptr;
  if (!Saved)
    throw KernelError("LRN's backward needs the kernel of its forward, made "
                      "by fnn_lrn_train_create");
  if (&Forward->device() != &K.device())
    throw KernelError("the forward kernel belongs to another device");
  // The hand-written backward recomputes s from the input and reads no
  // workspace.
  if (useNativeBackward(D, PD.impl_info_str())) {
    auto State = std::make_unique<LrnWorkspace>(*Saved);
    State->Native = makeLrnNative(D);
    LrnNative &L = State->Native;
    // Per thread: s^-beta and t of a tile, and a row of window sums of t;
    // rounded to 64 bytes, so that threads share no cache line.
    int64_t Floats =
        L.ChannelsLast ? 3 * L.Channels : (2 * L.Channels + 1) * L.Block;
    L.ScratchFloats = (Floats + 15) / 16 * 16;
    memory Scratch = K.addInternal(denseDesc({L.Threads * L.ScratchFloats}));
    L.Scratch = static_cast<float *>(Scratch.get_data_handle());
    K.setState(std::move(State));
    return;
  }
  // oneDNN's backward reads the workspace of its forward, if it has one.
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0 && Saved->Memory.get_desc() != WorkspaceDesc)
    throw KernelError("the forward kernel was made from a different "
                      "descriptor");
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(LrnBwSrcSlot)},
      {DNNL_ARG_DIFF_DST, K.operand(LrnBwDiffDstSlot)},
      {DNNL_ARG_DIFF_SRC, K.operand(LrnBwDiffSrcSlot)}};
  if (WorkspaceDesc.get_size() > 0)
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
  auto State = std::make_unique<LrnWorkspace>(*Saved);
  State->Native = LrnNative(); // whatever the forward runs
  K.setState(std::move(State));
  K.addStep(dnnl::lrn_backward(PD), Args, PD.scratchpad_desc());
}
} // namespace

extern "C" fnn_kernel *fnn_batch_norm_create(fnn_device *Device,
                                             const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_create", Device, Desc, buildBatchNorm,
                      describeBatchNorm);
}

extern "C" void fnn_batch_norm_forward(fnn_kernel *Handle, const void *Input,
                                       const void *Scale, const void *Shift,
                                       const void *Mean, const void *Variance,
                                       void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  const BatchNormFold &F = Kernel->state<BatchNormFold>();
  const float *S = static_cast<const float *>(Scale),
              *T = static_cast<const float *>(Shift),
              *M = static_cast<const float *>(Mean),
              *V = static_cast<const float *>(Variance);
  // In double so that A and B are each rounded once.
  for (int64_t C = 0; C < F.Channels; ++C) {
    double A = S[C] / std::sqrt(double(V[C]) + F.Epsilon);
    F.A[C] = static_cast<float>(A);
    F.B[C] = static_cast<float>(T[C] - M[C] * A);
  }
  Kernel->bind(BnSrcSlot, Input);
  Kernel->bind(BnDstSlot, Output);
  Kernel->run();
}

extern "C" fnn_kernel *fnn_lrn_create(fnn_device *Device,
                                      const fnn_lrn_desc *Desc) {
  return createKernel("fnn_lrn_create", Device, Desc, buildLrn,
                      fastnn::runtime::describeLrn);
}

extern "C" void fnn_lrn_forward(fnn_kernel *Handle, const void *Input,
                                void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  const LrnNative &Native = lrnNative(*Kernel);
  if (Native.Enabled) {
    lrnForwardNative(Native, static_cast<const float *>(Input),
                     static_cast<float *>(Output));
    return;
  }
  Kernel->bind(LrnSrcSlot, Input);
  Kernel->bind(LrnDstSlot, Output);
  Kernel->run();
}

extern "C" fnn_kernel *fnn_lrn_train_create(fnn_device *Device,
                                            const fnn_lrn_desc *Desc) {
  return createKernel("fnn_lrn_train_create", Device, Desc, buildLrnTraining,
                      fastnn::runtime::describeLrn);
}

extern "C" fnn_kernel *fnn_lrn_backward_create(fnn_device *Device,
                                               const fnn_lrn_desc *Desc,
                                               fnn_kernel *Forward) {
  return createKernel(
      "fnn_lrn_backward_create", Device, Desc,
      [Forward](CpuKernel &K, const fnn_lrn_desc &D) {
        buildLrnBackward(K, D, CpuKernel::find(Forward));
      },
      fastnn::runtime::describeLrn);
}

extern "C" void fnn_lrn_backward(fnn_kernel *Handle, const void *Input,
                                 const void *GradOutput, void *GradInput) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  const LrnNative &Native = Kernel->state<LrnWorkspace>().Native;
  if (Native.Enabled) {
    lrnBackwardNative(Native, static_cast<const float *>(Input),
                      static_cast<const float *>(GradOutput),
                      static_cast<float *>(GradInput));
    return;
  }
  Kernel->bind(LrnBwSrcSlot, Input);
  Kernel->bind(LrnBwDiffDstSlot, GradOutput);
  Kernel->bind(LrnBwDiffSrcSlot, GradInput);
  Kernel->run();
}
