//===- Reduction.cpp - fnn_reduce -----------------------------------------===//
//
// Reductions over trailing dimensions (full reductions among them: the L2
// loss's sum of squares of every weight) are hand-written blocked sums;
// the others run oneDNN's reduction primitive. oneDNN 2.6 reduces a tensor
// to few elements on one thread in its reference code (30 ms for a 2.4M
// element ResNet-50 filter, a fifth of a training step over all the L2
// terms).
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, DstSlot };

/// Elements per partial result of the blocked reduction. The partials, and
/// so the result, depend on this alone, not on the number of threads.
constexpr int64_t ChunkElements = 16384;
/// Independent accumulators per chunk: enough to keep the adds of both
/// vector units busy, and an 8-way split that shortens each sum.
constexpr int64_t Lanes = 8;

/// A reduction of a dense [Rows, Length] view (the kept dimensions, then
/// the reduced ones) to Rows outputs. Each row is cut into fixed chunks of
/// ChunkElements; a chunk is reduced into Lanes accumulators, which are
/// combined pairwise, and each row's chunk partials are combined in chunk
/// order. Sums accumulate in double, so a sum is within an ulp or so of the
/// exactly rounded one (a float running sum of 2.4M terms loses ~10 bits);
/// max and min propagate NaN.
struct BlockedReduction final : KernelState {
  int64_t Kind = FNN_REDUCE_SUM;
  int64_t Rows = 0, Length = 0, ChunksPerRow = 0;
  int Threads = 1;
  /// Rows x ChunksPerRow partials, written by the first pass.
  std::vector<double> Partials;
};

/// The [Rows, Length] view of \p D if its reduced dimensions (ignoring
/// dimensions of size 1) all follow its kept ones; false otherwise.
bool trailingView(const fnn_reduce_desc &D, int64_t &Rows, int64_t &Length) {
  Rows = Length = 1;
  for (int64_t I = 0; I < D.input.rank; ++I) {
    if (D.input.dims[I] == 1)
      continue;
    if (D.output.dims[I] == 1)
      Length *= D.input.dims[I];
    else if (Length == 1)
      Rows *= D.input.dims[I];
    else
      return false;
  }
  return true;
}

/// Max (or, with \p Min, min) of two values that is NaN if either is.
inline double extremum(double A, double B, bool Min) {
  if (std::isnan(A) || std::isnan(B))
    return std::nan("");
  return Min ? std::min(A, B) : std::max(A, B);
}

double chunkSum(const float *X, int64_t N) {
  double Acc[Lanes] = {};
  int64_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L)
      Acc[L] += X[I + L];
  for (int64_t L = 0; I < N; ++I, ++L)
    Acc[L] += X[I];
  return ((Acc[0] + Acc[1]) + (Acc[2] + Acc[3])) +
         ((Acc[4] + Acc[5]) + (Acc[6] + Acc[7]));
}

/// Max (or min) of X[0, N), N > 0; NaN if any element is.
template <bool Min> double chunkExtremum(const float *X, int64_t N) {
  float Acc[Lanes];
  std::fill(Acc, Acc + Lanes, X[0]);
  bool Nan = false;
  int64_t I = 0;
  // A select and an unordered compare per element, which vectorise.
  for (; I + Lanes <= N; I += Lanes)
    for (int64_t L = 0; L < Lanes; ++L) {
      float V = X[I + L];
      Acc[L] = (Min ? V < Acc[L] : V > Acc[L]) ? V : Acc[L];
      Nan |= V != V;
    }
  for (; I < N; ++I) {
    Acc[0] = (Min ? X[I] < Acc[0] : X[I] > Acc[0]) ? X[I] : Acc[0];
    Nan |= X[I] != X[I];
  }
  if (Nan)
    return std::nan("");
  return *(Min ? std::min_element(Acc, Acc + Lanes)
               : std::max_element(Acc, Acc + Lanes));
}

double chunkPartial(int64_t Kind, const float *X, int64_t N) {
  switch (Kind) {
  case FNN_REDUCE_MAX:
    return chunkExtremum<false>(X, N);
  case FNN_REDUCE_MIN:
    return chunkExtremum<true>(X, N);
  default:
    return chunkSum(X, N);
  }
}

void runBlocked(BlockedReduction &R, const float *X, float *Y) {
  parallelFor(R.Rows * R.ChunksPerRow, R.Threads,
              [&](int64_t Begin, int64_t End, int) {
                for (int64_t Task = Begin; Task < End; ++Task) {
                  int64_t Row = Task / R.ChunksPerRow,
                          Start = Task % R.ChunksPerRow * ChunkElements;
                  R.Partials[Task] =
                      chunkPartial(R.Kind, X + Row * R.Length + Start,
                                   std::min(ChunkElements, R.Length - Start));
                }
              });
  bool Extremum = R.Kind == FNN_REDUCE_MAX || R.Kind == FNN_REDUCE_MIN;
  for (int64_t Row = 0; Row < R.Rows; ++Row) {
    const double *P = &R.Partials[Row * R.ChunksPerRow];
    double Result = P[0];
    for (int64_t C = 1; C < R.ChunksPerRow; ++C)
      Result = Extremum ? extremum(Result, P[C], R.Kind == FNN_REDUCE_MIN)
                        : Result + P[C];
    if (R.Kind == FNN_REDUCE_MEAN)
      Result /= static_cast<double>(R.Length);
    Y[Row] = static_cast<float>(Result);
  }
}

void build(CpuKernel &K, const fnn_reduce_desc &D) {
  bool Reduces = fastnn::runtime::checkReduceShapes(D);
  if (D.kind < FNN_REDUCE_SUM || D.kind > FNN_REDUCE_MIN)
    throw KernelError("unknown reduction kind " + std::to_string(D.kind));
  int64_t Rows, Length;
  if (Reduces && trailingView(D, Rows, Length)) {
    auto R = std::make_unique<BlockedReduction>();
    R->Kind = D.kind;
    R->Rows = Rows;
    R->Length = Length;
    R->ChunksPerRow = (Length + ChunkElements - 1) / ChunkElements;
    R->Threads = threadsForWork(Rows * Length);
    R->Partials.resize(Rows * R->ChunksPerRow);
    K.setState(std::move(R));
    return;
  }
  memory::desc SrcDesc = denseDesc(toDims(D.input));
  memory::desc DstDesc = denseDesc(toDims(D.output));
  K.addOperand(SrcDesc);
  K.addOperand(DstDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(SrcSlot)}, {DNNL_ARG_DST, K.operand(DstSlot)}};
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  // oneDNN rejects a reduction over nothing (every reduced dimension already
  // 1); it is a copy for every kind.
  if (!Reduces) {
    dnnl::reorder::primitive_desc PD(K.device().Engine, SrcDesc,
                                     K.device().Engine, DstDesc, Attr);
    K.addStep(dnnl::reorder(PD), Args, PD.scratchpad_desc());
    return;
  }
  dnnl::algorithm Alg;
  switch (D.kind) {
  case FNN_REDUCE_SUM:
    Alg = dnnl::algorithm::reduction_sum;
    break;
  case FNN_REDUCE_MEAN:
    Alg = dnnl::algorithm::reduction_mean;
    break;
  case FNN_REDUCE_MAX:
    Alg = dnnl::algorithm::reduction_max;
    break;
  default:
    Alg = dnnl::algorithm::reduction_min;
    break;
  }
  dnnl::reduction::primitive_desc PD({Alg, SrcDesc, DstDesc, 0.f, 0.f}, Attr,
                                     K.device().Engine);
  K.addStep(dnnl::reduction(PD), Args, PD.scratchpad_desc());
}
} // namespace

extern "C" fnn_kernel *fnn_reduce_create(fnn_device *Device,
                                         const fnn_reduce_desc *Desc) {
  return createKernel("fnn_reduce_create", Device, Desc, build,
                      fastnn::runtime::describeReduce);
}

extern "C" void fnn_reduce_forward(fnn_kernel *Handle, const void *Input,
                                   void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  if (BlockedReduction *R = Kernel->findState<BlockedReduction>()) {
    runBlocked(*R, static_cast<const float *>(Input),
               static_cast<float *>(Output));
    return;
  }
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
