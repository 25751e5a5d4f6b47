//===- BatchNormTrain.cpp - training-mode fnn_batch_norm and its backward -===//
//
// Channels-last float32 and bfloat16 on CPUs with AVX2 run on the loops of
// DirectBatchNorm below; the rest on oneDNN:
// oneDNN batch_normalization with batch statistics (no use_global_stats),
// on float32, bfloat16 or (converted to float32) float16 activations with
// float32 statistics, scale and shift:
// forward_training writes the batch mean and biased variance (outputs
// DNNL_ARG_MEAN/VARIANCE), and the backward (prop_kind::backward,
// use_scale | use_shift) reads them back (inputs) with the input to produce
// grad_input, grad_scale and grad_shift. A residual (FNN_POST_RESIDUAL) is a
// binary add after the normalisation there, the activation its post-op.
//
// oneDNN 2.6's backward with use_shift counts DNNL_ARG_SHIFT among its
// inputs and fails execution with invalid_arguments without it, although the
// gradients do not depend on the shift; the ABI does not pass it, so the
// kernel binds a zeroed buffer of its own there once at create.
//
// fnn_kernel runs all of its steps on every call, so a gradient the caller
// does not want (NULL) goes to a kernel-owned spare buffer, as in
// ConvolutionBackward.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order the builders add them.
enum ForwardSlot {
  FwSrcSlot,
  FwScaleSlot,
  FwShiftSlot,
  FwDstSlot,
  FwMeanSlot,
  FwVarianceSlot,
  FwResidualSlot
};
enum BackwardSlot {
  BwSrcSlot,
  BwScaleSlot,
  BwMeanSlot,
  BwVarianceSlot,
  BwDiffDstSlot,
  BwDiffSrcSlot,
  BwDiffScaleSlot,
  BwDiffShiftSlot,
  BwShiftSlot,
  BwSpareDiffSrcSlot,
  BwSpareDiffScaleSlot,
  BwSpareDiffShiftSlot
};

std::string describe(const fnn_batch_norm_desc &D) {
  std::ostringstream S;
  S << "batch_norm (training) input " << shapeText(D.input) << " "
    << layoutName(D.layout) << ", epsilon " << D.epsilon;
  return S.str();
}

const auto Flags =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

/// Checks the desc and returns the forward_training primitive descriptor
/// both kernels are made from, on the layout the primitives run on: the
/// activations' own where oneDNN 2.6 has a jit kernel for it, else nChw16c,
/// which pads the channels to whole blocks, reordered to and from. Its batch
/// norm on plain NCHW is the ncsp implementation (~10x slower than the jit
/// one on nChw16c, slower still in bfloat16), and in bfloat16 on NHWC with
/// a part of a 16-channel block the generic nspc one at ~0.4 GB/s
/// (MobileNet v2's 24-channel batch norms took 44 ms of its 150 ms bf16
/// training step on two cores; the reorders and the jit kernel together
/// are ~30x faster). The data type is the compute type (float16 is
/// converted to float32); statistics, scale and shift are float32 in every
/// case.
dnnl::batch_normalization_forward::primitive_desc
forwardDesc(CpuKernel &K, const fnn_batch_norm_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  fastnn::runtime::checkTrainingBatchNormPostOp(D.post_op);
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  auto Create = [&](const memory::desc &Data) {
    return dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(
            dnnl::prop_kind::forward_training, Data,
            static_cast<float>(D.epsilon), Flags),
        makeAttr(FNN_POST_NONE), K.device().Engine);
  };
  memory::desc Plain = activationDesc(D.input, D.layout, computeType(D.dtype));
  auto PD = Create(Plain);
  if (D.input.rank == 4 &&
      std::string(PD.impl_info_str()).find("jit") == std::string::npos)
    return Create(memory::desc(Plain.dims(), Plain.data_type(),
                               memory::format_tag::nChw16c));
  return PD;
}

memory::desc channelDesc(const fnn_batch_norm_desc &D) {
  return memory::desc({activationDesc(D.input, D.layout).dims()[1]},
                      memory::data_type::f32, memory::format_tag::a);
}

/// Batch norm over channels-last float32 or bfloat16 (NHWC, or a rank-2
/// [N, C]) written here rather than run on oneDNN: oneDNN 2.6's bnorm_jit
/// moves 12-19 GB/s on two cores where these loops, vectorised over the
/// contiguous channels, move ~30 forward and ~45 backward (ResNet-50's and
/// Inception v3's bfloat16 shapes, 2 threads of an AVX-512 Xeon: forward
/// 1.6-1.8x, backward 2.3-2.5x faster); resnet_v1_50 bf16 training spends
/// a quarter of its step in batch norm. The passes are oneDNN's: forward
/// sums, then normalises; backward sums grad_output and grad_output x
/// (x - mean), then writes grad_input. Sums are taken in float32 over blocks
/// of SumBlockRows rows, of x minus the first row (a shift near the mean, so
/// that the variance does not cancel), and added in float64, per thread
/// over a static split of the rows, then over the threads in order: the
/// same bits on every run with the same thread count.
constexpr int64_t SumBlockRows = 64;

/// What one parallel pass over the rows computes (see DirectBatchNorm).
struct RowPass {
  enum Kind { Stats, Normalize, GradientSums, InputGradient } Kind;
  int64_t C;
  /// Normalize: the post-op's activation (FNN_POST_NONE, _RELU, _RELU6).
  int64_t Activation;
  const void *X, *Dy;
  void *Out;
  /// Stats: the shift; Normalize: multiplier, addend; GradientSums: mean;
  /// InputGradient: mean, multiplier, grad_output's mean, x's coefficient.
  const float *P0, *P1, *P2, *P3;
  /// Per thread: 2 * C floats of block sums, 2 * C doubles of sums.
  float *Blocks;
  double *Sums;
  /// Normalize: the residual added before the activation, or null.
  const void *Residual = nullptr;
};

/// One row of the Normalize pass: activation(x * P0 + P1 [+ residual]).
template <typename T, bool AddResidual, int64_t Activation>
[[gnu::always_inline]] inline void normalizeRow(const RowPass &P, const T *X,
                                                const T *Residual, T *Y) {
  for (int64_t I = 0; I < P.C; ++I) {
    float V = widen(X[I]) * P.P0[I] + P.P1[I];
    if constexpr (AddResidual)
      V += widen(Residual[I]);
    if constexpr (Activation == FNN_POST_RELU)
      V = std::max(0.f, V);
    else if constexpr (Activation == FNN_POST_RELU6)
      V = std::min(6.f, std::max(0.f, V));
    narrow(Y[I], V);
  }
}

template <typename T, bool AddResidual>
[[gnu::always_inline]] inline void normalizeRows(const RowPass &P,
                                                 int64_t Begin, int64_t End) {
  const int64_t C = P.C;
  const T *X = static_cast<const T *>(P.X);
  const T *Residual = static_cast<const T *>(P.Residual);
  T *Y = static_cast<T *>(P.Out);
  for (int64_t R = Begin; R < End; ++R) {
    const T *Rr = AddResidual ? Residual + R * C : nullptr;
    if (P.Activation == FNN_POST_RELU)
      normalizeRow<T, AddResidual, FNN_POST_RELU>(P, X + R * C, Rr, Y + R * C);
    else if (P.Activation == FNN_POST_RELU6)
      normalizeRow<T, AddResidual, FNN_POST_RELU6>(P, X + R * C, Rr, Y + R * C);
    else
      normalizeRow<T, AddResidual, FNN_POST_NONE>(P, X + R * C, Rr, Y + R * C);
  }
}

template <typename T>
[[gnu::always_inline]] inline void runRowsOf(const RowPass &P, int64_t Begin,
                                             int64_t End, int Thread) {
  const int64_t C = P.C;
  const T *X = static_cast<const T *>(P.X);
  const T *Dy = static_cast<const T *>(P.Dy);
  switch (P.Kind) {
  case RowPass::Stats:
  case RowPass::GradientSums: {
    float *S = P.Blocks + Thread * 2 * C, *Q = S + C;
    double *Sum = P.Sums + Thread * 2 * C, *Square = Sum + C;
    const float *Center = P.P0;
    for (int64_t R0 = Begin; R0 < End; R0 += SumBlockRows) {
      int64_t R1 = std::min(End, R0 + SumBlockRows);
      std::fill(S, S + 2 * C, 0.f);
      for (int64_t R = R0; R < R1; ++R) {
        const T *Xr = X + R * C;
        if (P.Kind == RowPass::Stats) {
          for (int64_t I = 0; I < C; ++I) {
            float D = widen(Xr[I]) - Center[I];
            S[I] += D;
            Q[I] += D * D;
          }
        } else {
          const T *Gr = Dy + R * C;
          for (int64_t I = 0; I < C; ++I) {
            float G = widen(Gr[I]);
            S[I] += G;
            Q[I] += G * (widen(Xr[I]) - Center[I]);
          }
        }
      }
      for (int64_t I = 0; I < C; ++I) {
        Sum[I] += S[I];
        Square[I] += Q[I];
      }
    }
    return;
  }
  case RowPass::Normalize:
    if (P.Residual)
      normalizeRows<T, true>(P, Begin, End);
    else
      normalizeRows<T, false>(P, Begin, End);
    return;
  case RowPass::InputGradient: {
    T *Dx = static_cast<T *>(P.Out);
    for (int64_t R = Begin; R < End; ++R) {
      const T *Xr = X + R * C, *Gr = Dy + R * C;
      T *Out = Dx + R * C;
      for (int64_t I = 0; I < C; ++I)
        narrow(Out[I], P.P1[I] * (widen(Gr[I]) - P.P2[I] -
                                  (widen(Xr[I]) - P.P0[I]) * P.P3[I]));
    }
    return;
  }
  }
}

template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void
runRowsAvx512(const RowPass &P, int64_t Begin, int64_t End, int Thread) {
  runRowsOf<T>(P, Begin, End, Thread);
}
template <typename T>
__attribute__((target("avx2"))) void
runRowsAvx2(const RowPass &P, int64_t Begin, int64_t End, int Thread) {
  runRowsOf<T>(P, Begin, End, Thread);
}

using RunRowsFn = void (*)(const RowPass &, int64_t, int64_t, int);

/// Whether \p D runs on DirectBatchNorm (else on oneDNN).
bool runsDirect(const fnn_batch_norm_desc &D) {
  bool ChannelsLast =
      (D.layout == FNN_NHWC && D.input.rank == 4) || D.input.rank == 2;
  return cpuHasAvx2() && ChannelsLast &&
         (D.dtype == FNN_F32 || D.dtype == FNN_BF16);
}

/// A DirectBatchNorm kernel's state: the geometry and buffers made at
/// create (per-thread sums, per-channel coefficients).
struct DirectBatchNorm final : KernelState {
  int64_t Rows = 0, C = 0;
  bool Bf16 = false;
  int64_t Activation = FNN_POST_NONE;
  bool AddResidual = false;
  double Epsilon = 0;
  int Threads = 1;
  RunRowsFn RunRows = nullptr;
  AlignedBuffer Blocks, Sums, Coefficients;

  explicit DirectBatchNorm(const fnn_batch_norm_desc &D) {
    C = D.input.dims[D.input.rank - 1];
    Rows = 1;
    for (int64_t I = 0; I + 1 < D.input.rank; ++I)
      Rows *= D.input.dims[I];
    Epsilon = D.epsilon;
    Bf16 = D.dtype == FNN_BF16;
    Activation = D.post_op & FNN_POST_ACTIVATION_MASK;
    AddResidual = D.post_op & FNN_POST_RESIDUAL;
    RunRows = cpuHasAvx512()
                  ? (Bf16 ? runRowsAvx512<uint16_t> : runRowsAvx512<float>)
                  : (Bf16 ? runRowsAvx2<uint16_t> : runRowsAvx2<float>);
    Threads = std::max(1, omp_get_max_threads());
    Blocks = allocateAligned(Threads * 2 * C * sizeof(float));
    Sums = allocateAligned(Threads * 2 * C * sizeof(double));
    Coefficients = allocateAligned(4 * C * sizeof(float));
  }

  void forward(const void *X, const float *Scale, const float *Shift,
               const void *Residual, void *Y, float *Mean,
               float *Variance) const {
    float *Center = coefficient(0), *A = coefficient(1), *B = coefficient(2);
    for (int64_t I = 0; I < C; ++I)
      Center[I] = rowValue(X, I);
    RowPass P{RowPass::Stats, C,       FNN_POST_NONE, X,
              nullptr,        nullptr, Center,        nullptr,
              nullptr,        nullptr, blocks(),      sums()};
    double *Sum = sumSlices();
    run(P);
    for (int64_t I = 0; I < C; ++I) {
      auto [S, Q] = threadTotals(Sum, I);
      double Shifted = S / Rows;
      Mean[I] = static_cast<float>(Center[I] + Shifted);
      Variance[I] =
          static_cast<float>(std::max(0.0, Q / Rows - Shifted * Shifted));
      float Multiplier = static_cast<float>(
          Scale[I] / std::sqrt(double(Variance[I]) + Epsilon));
      A[I] = Multiplier;
      B[I] = Shift[I] - Mean[I] * Multiplier;
    }
    RowPass N{RowPass::Normalize,
              C,
              Activation,
              X,
              nullptr,
              Y,
              A,
              B,
              nullptr,
              nullptr,
              nullptr,
              nullptr,
              AddResidual ? Residual : nullptr};
    run(N);
  }

  void backward(const void *X, const float *Scale, const float *Mean,
                const float *Variance, const void *Dy, void *Dx,
                float *GradScale, float *GradShift) const {
    float *A = coefficient(1), *GradMean = coefficient(2),
          *XCoefficient = coefficient(3);
    RowPass P{RowPass::GradientSums,
              C,
              FNN_POST_NONE,
              X,
              Dy,
              nullptr,
              Mean,
              nullptr,
              nullptr,
              nullptr,
              blocks(),
              sums()};
    double *Sum = sumSlices();
    run(P);
    for (int64_t I = 0; I < C; ++I) {
      auto [S, Q] = threadTotals(Sum, I);
      double InvStd = 1 / std::sqrt(double(Variance[I]) + Epsilon);
      if (GradShift)
        GradShift[I] = static_cast<float>(S);
      if (GradScale)
        GradScale[I] = static_cast<float>(Q * InvStd);
      A[I] = static_cast<float>(Scale[I] * InvStd);
      GradMean[I] = static_cast<float>(S / Rows);
      XCoefficient[I] = static_cast<float>(Q / Rows * InvStd * InvStd);
    }
    if (!Dx)
      return;
    RowPass G{RowPass::InputGradient,
              C,
              FNN_POST_NONE,
              X,
              Dy,
              Dx,
              Mean,
              A,
              GradMean,
              XCoefficient,
              nullptr,
              nullptr};
    run(G);
  }

private:
  float *coefficient(int Which) const {
    return static_cast<float *>(Coefficients.get()) + Which * C;
  }
  float *blocks() const { return static_cast<float *>(Blocks.get()); }
  double *sums() const { return static_cast<double *>(Sums.get()); }
  /// The per-thread sums, zeroed (threads beyond the team add nothing).
  double *sumSlices() const {
    std::fill(sums(), sums() + Threads * 2 * C, 0.0);
    return sums();
  }
  /// Channel \p I's two sums, added over the threads in order.
  std::pair<double, double> threadTotals(const double *Sum, int64_t I) const {
    double S = 0, Q = 0;
    for (int T = 0; T < Threads; ++T) {
      S += Sum[T * 2 * C + I];
      Q += Sum[T * 2 * C + C + I];
    }
    return {S, Q};
  }
  float rowValue(const void *X, int64_t I) const {
    return Bf16 ? widen(static_cast<const uint16_t *>(X)[I])
                : static_cast<const float *>(X)[I];
  }
  void run(const RowPass &P) const {
    parallelFor(Rows, std::min(Threads, threadsForWork(Rows * C)),
                [&](int64_t Begin, int64_t End, int Thread) {
                  RunRows(P, Begin, End, Thread);
                });
  }
};

void buildForward(CpuKernel &K, const fnn_batch_norm_desc &D) {
  auto PD = forwardDesc(K, D);
  if (runsDirect(D)) {
    K.setState(std::make_unique<DirectBatchNorm>(D));
    return;
  }
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ChannelDesc = channelDesc(D);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  memory Src = K.inputIn(FwSrcSlot, PD.src_desc());
  memory Dst = K.outputIn(FwDstSlot, PD.dst_desc());
  bool AddResidual = D.post_op & FNN_POST_RESIDUAL;
  memory Normalized = AddResidual ? K.addTransient(PD.dst_desc()) : Dst;
  K.addStep(dnnl::batch_normalization_forward(PD),
            {{DNNL_ARG_SRC, Src},
             {DNNL_ARG_SCALE, K.operand(FwScaleSlot)},
             {DNNL_ARG_SHIFT, K.operand(FwShiftSlot)},
             {DNNL_ARG_DST, Normalized},
             {DNNL_ARG_MEAN, K.operand(FwMeanSlot)},
             {DNNL_ARG_VARIANCE, K.operand(FwVarianceSlot)}},
            PD.scratchpad_desc());
  if (AddResidual) {
    // The activation is the add's post-op; the residual, which may be the
    // output itself, is its in-place operand.
    memory Residual = K.inputIn(FwResidualSlot, PD.dst_desc());
    dnnl::binary::primitive_desc Add(
        dnnl::binary::desc(dnnl::algorithm::binary_add, PD.dst_desc(),
                           PD.dst_desc(), PD.dst_desc()),
        makeAttr(D.post_op & FNN_POST_ACTIVATION_MASK), K.device().Engine);
    K.addStep(dnnl::binary(Add),
              {{DNNL_ARG_SRC_0, Residual},
               {DNNL_ARG_SRC_1, Normalized},
               {DNNL_ARG_DST, Dst}},
              Add.scratchpad_desc());
  } else if (D.post_op != FNN_POST_NONE) {
    // oneDNN 2.6's batch norm fuses a relu only with a workspace for its
    // backward, which the compiler's gradient does not read, and no relu6:
    // the activation in place instead.
    bool Relu6 = D.post_op == FNN_POST_RELU6;
    dnnl::eltwise_forward::primitive_desc Activation(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    Relu6 ? dnnl::algorithm::eltwise_clip
                                          : dnnl::algorithm::eltwise_relu,
                                    PD.dst_desc(), 0.f, Relu6 ? 6.f : 0.f),
        makeAttr(FNN_POST_NONE), K.device().Engine);
    K.addStep(dnnl::eltwise_forward(Activation),
              {{DNNL_ARG_SRC, Dst}, {DNNL_ARG_DST, Dst}},
              Activation.scratchpad_desc());
  }
  K.finishOutput(FwDstSlot, Dst);
}

void buildBackward(CpuKernel &K, const fnn_batch_norm_desc &D) {
  if (D.post_op != FNN_POST_NONE)
    throw KernelError("post_op must be FNN_POST_NONE for the backward (the "
                      "compiler applies the relu's gradient itself)");
  auto Forward = forwardDesc(K, D);
  if (runsDirect(D)) {
    K.setState(std::make_unique<DirectBatchNorm>(D));
    return;
  }
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ComputeDesc = Forward.src_desc();
  memory::desc ChannelDesc = channelDesc(D);
  dnnl::batch_normalization_backward::primitive_desc PD(
      dnnl::batch_normalization_backward::desc(
          dnnl::prop_kind::backward, ComputeDesc, ComputeDesc,
          static_cast<float>(D.epsilon), Flags),
      makeAttr(FNN_POST_NONE), K.device().Engine, Forward);
  K.addOperand(DataDesc);
  for (int I = 0; I < 3; ++I)
    K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  // The ignored shift input, zero, bound once to a kernel-owned buffer; then
  // the spares (grad_input, grad_scale, grad_shift).
  memory Shift = K.addInternal(ChannelDesc);
  std::memset(Shift.get_data_handle(), 0, ChannelDesc.get_size());
  K.addOperand(ChannelDesc);
  K.bind(BwShiftSlot, Shift.get_data_handle());
  K.addSpareOperand(DataDesc);
  K.addSpareOperand(ChannelDesc);
  K.addSpareOperand(ChannelDesc);
  memory Src = K.inputIn(BwSrcSlot, PD.src_desc());
  memory DiffDst = K.inputIn(BwDiffDstSlot, PD.diff_dst_desc());
  memory DiffSrc = K.outputIn(BwDiffSrcSlot, PD.diff_src_desc());
  K.addStep(dnnl::batch_normalization_backward(PD),
            {{DNNL_ARG_SRC, Src},
             {DNNL_ARG_SCALE, K.operand(BwScaleSlot)},
             {DNNL_ARG_SHIFT, K.operand(BwShiftSlot)},
             {DNNL_ARG_MEAN, K.operand(BwMeanSlot)},
             {DNNL_ARG_VARIANCE, K.operand(BwVarianceSlot)},
             {DNNL_ARG_DIFF_DST, DiffDst},
             {DNNL_ARG_DIFF_SRC, DiffSrc},
             {DNNL_ARG_DIFF_SCALE, K.operand(BwDiffScaleSlot)},
             {DNNL_ARG_DIFF_SHIFT, K.operand(BwDiffShiftSlot)}},
            PD.scratchpad_desc());
  K.finishOutput(BwDiffSrcSlot, DiffSrc);
}

} // namespace

extern "C" fnn_kernel *
fnn_batch_norm_train_create(fnn_device *Device,
                            const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_train_create", Device, Desc, buildForward,
                      describe);
}

extern "C" void fnn_batch_norm_train_forward(
    fnn_kernel *Handle, const void *Input, const void *Scale, const void *Shift,
    const void *Residual, void *Output, void *Mean, void *Variance) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  if (const DirectBatchNorm *Direct = Kernel->findState<DirectBatchNorm>()) {
    Direct->forward(Input, static_cast<const float *>(Scale),
                    static_cast<const float *>(Shift), Residual, Output,
                    static_cast<float *>(Mean), static_cast<float *>(Variance));
    return;
  }
  Kernel->bind(FwSrcSlot, Input);
  Kernel->bind(FwScaleSlot, Scale);
  Kernel->bind(FwShiftSlot, Shift);
  Kernel->bind(FwDstSlot, Output);
  Kernel->bind(FwMeanSlot, Mean);
  Kernel->bind(FwVarianceSlot, Variance);
  Kernel->bind(FwResidualSlot, Residual);
  Kernel->run();
}

extern "C" fnn_kernel *
fnn_batch_norm_backward_create(fnn_device *Device,
                               const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_backward_create", Device, Desc,
                      buildBackward, describe);
}

extern "C" void fnn_batch_norm_backward(fnn_kernel *Handle, const void *Input,
                                        const void *Scale, const void *Mean,
                                        const void *Variance,
                                        const void *GradOutput, void *GradInput,
                                        void *GradScale, void *GradShift) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  if (const DirectBatchNorm *Direct = Kernel->findState<DirectBatchNorm>()) {
    Direct->backward(Input, static_cast<const float *>(Scale),
                     static_cast<const float *>(Mean),
                     static_cast<const float *>(Variance), GradOutput,
                     GradInput, static_cast<float *>(GradScale),
                     static_cast<float *>(GradShift));
    return;
  }
  Kernel->bind(BwSrcSlot, Input);
  Kernel->bind(BwScaleSlot, Scale);
  Kernel->bind(BwMeanSlot, Mean);
  Kernel->bind(BwVarianceSlot, Variance);
  Kernel->bind(BwDiffDstSlot, GradOutput);
  Kernel->bind(BwDiffSrcSlot, Kernel->orSpare(GradInput, BwSpareDiffSrcSlot));
  Kernel->bind(BwDiffScaleSlot,
               Kernel->orSpare(GradScale, BwSpareDiffScaleSlot));
  Kernel->bind(BwDiffShiftSlot,
               Kernel->orSpare(GradShift, BwSpareDiffShiftSlot));
  Kernel->run();
}
