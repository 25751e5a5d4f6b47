//===- Matmul.cpp - fnn_matmul on CUDA (cuBLASLt) -------------------------===//
//
// Row-major out[M, N] = a[M, K] b[K, N] is, seen column-major, out^T =
// b^T a^T: cuBLASLt's first operand is b, its second a, and each stored
// operand is either the transposed view it needs (op N) or that view's
// transpose (op T). The bias (one value per output column, N) is then
// cuBLASLt's per-row bias epilogue; ReLU is its RELU/RELU_BIAS epilogue.
// float32 computes in float32 (CUBLAS_COMPUTE_32F: no TF32, as the CPU);
// float16 and bfloat16 multiply on tensor cores and accumulate in float32.
//
// Leading (batch) dimensions: each run of them that is one strided batch
// for every operand (an operand either has all of them or broadcasts over
// all) is one cuBLASLt call with batch stride 0 for the broadcast operand;
// mixed broadcasts split into one call per index of the outer dimensions,
// listed at create. The heuristic and its workspace are chosen at create.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"

using namespace fastnn::cuda;

namespace {

template <typename T, cublasStatus_t (*Destroy)(T)> struct LtHandle {
  T Handle = nullptr;
  LtHandle() = default;
  LtHandle(const LtHandle &) = delete;
  LtHandle &operator=(const LtHandle &) = delete;
  ~LtHandle() {
    if (Handle)
      Destroy(Handle);
  }
};

struct MatmulCall {
  int64_t AOffset, BOffset, OutOffset; // elements
};

struct MatmulKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  LtHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> Op;
  LtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> ALayout,
      BLayout, OutLayout;
  cublasLtMatmulAlgo_t Algo{};
  size_t WorkspaceBytes = 0, ElementBytes = 4;
  bool HasBias = false;
  std::vector<MatmulCall> Calls;
};

/// \p Shape left-padded with 1s to \p Rank.
std::vector<int64_t> padded(const fnn_shape &Shape, size_t Rank) {
  std::vector<int64_t> Dims(Rank - Shape.rank, 1);
  Dims.insert(Dims.end(), Shape.dims, Shape.dims + Shape.rank);
  return Dims;
}

cudaDataType_t cudaType(int64_t DType) {
  return DType == FNN_F16    ? CUDA_R_16F
         : DType == FNN_BF16 ? CUDA_R_16BF
                             : CUDA_R_32F;
}

void layout(LtHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> &L,
            cudaDataType_t Type, int64_t Rows, int64_t Cols, int64_t Batch,
            int64_t BatchStride) {
  // Column-major Rows x Cols with leading dimension Rows.
  check(cublasLtMatrixLayoutCreate(&L.Handle, Type, static_cast<uint64_t>(Rows),
                                   static_cast<uint64_t>(Cols), Rows),
        "cublasLtMatrixLayoutCreate");
  int32_t Count = static_cast<int32_t>(Batch);
  check(cublasLtMatrixLayoutSetAttribute(L.Handle,
                                         CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                         &Count, sizeof(Count)),
        "cublasLtMatrixLayoutSetAttribute");
  check(cublasLtMatrixLayoutSetAttribute(
            L.Handle, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &BatchStride,
            sizeof(BatchStride)),
        "cublasLtMatrixLayoutSetAttribute");
}

std::unique_ptr<MatmulKernel> build(fnn_device &Device,
                                    const fnn_matmul_desc &D) {
  fastnn::runtime::checkMatmulDesc(D);
  const size_t Rank = D.output.rank;
  std::vector<int64_t> A = padded(D.a, Rank), B = padded(D.b, Rank),
                       Out = padded(D.output, Rank);
  // Logical M x K and K x N from the stored shapes.
  int64_t M = D.transpose_a ? A[Rank - 1] : A[Rank - 2];
  int64_t K = D.transpose_a ? A[Rank - 2] : A[Rank - 1];
  int64_t KB = D.transpose_b ? B[Rank - 1] : B[Rank - 2];
  int64_t N = D.transpose_b ? B[Rank - 2] : B[Rank - 1];
  if (K != KB || M != Out[Rank - 2] || N != Out[Rank - 1])
    throw KernelError("inner or outer dimensions do not match");
  for (size_t I = 0; I + 2 < Rank; ++I)
    if ((A[I] != 1 && A[I] != Out[I]) || (B[I] != 1 && B[I] != Out[I]))
      throw KernelError("batch dimensions of a or b do not broadcast to the "
                        "output's");

  // The innermost run of batch dimensions over which each operand is either
  // whole or broadcast becomes cuBLASLt's batch; the dimensions before it
  // are iterated over with one call each.
  const size_t Batch = Rank - 2;
  auto Pattern = [&](size_t I) {
    return (A[I] == Out[I] ? 1 : 0) | (B[I] == Out[I] ? 2 : 0);
  };
  size_t RunBegin = Batch;
  int RunPattern = -1; // bit 0: a whole, bit 1: b whole; -1: all 1s so far
  while (RunBegin > 0) {
    size_t I = RunBegin - 1;
    if (Out[I] != 1) {
      int P = Pattern(I);
      if (RunPattern >= 0 && P != RunPattern)
        break;
      RunPattern = P;
    }
    --RunBegin;
  }
  int64_t RunCount = 1;
  for (size_t I = RunBegin; I < Batch; ++I)
    RunCount *= Out[I];
  bool AWhole = RunPattern < 0 || (RunPattern & 1);
  bool BWhole = RunPattern < 0 || (RunPattern & 2);

  auto Kernel = std::make_unique<MatmulKernel>(Device);
  MatmulKernel &Kr = *Kernel;
  Kr.ElementBytes = elementBytes(D.dtype);
  Kr.HasBias = D.has_bias != 0;
  const cudaDataType_t Type = cudaType(D.dtype);
  check(cublasLtMatmulDescCreate(&Kr.Op.Handle, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  // First operand b^T (N x K), second a^T (K x M), result out^T (N x M).
  cublasOperation_t OpB = D.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t OpA = D.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(
            Kr.Op.Handle, CUBLASLT_MATMUL_DESC_TRANSA, &OpB, sizeof(OpB)),
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(
            Kr.Op.Handle, CUBLASLT_MATMUL_DESC_TRANSB, &OpA, sizeof(OpA)),
        "cublasLtMatmulDescSetAttribute");
  cublasLtEpilogue_t Epilogue =
      D.post_op == FNN_POST_RELU
          ? (D.has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
          : (D.has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  check(cublasLtMatmulDescSetAttribute(Kr.Op.Handle,
                                       CUBLASLT_MATMUL_DESC_EPILOGUE, &Epilogue,
                                       sizeof(Epilogue)),
        "cublasLtMatmulDescSetAttribute");
  if (D.has_bias) {
    check(cublasLtMatmulDescSetAttribute(Kr.Op.Handle,
                                         CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                         &Type, sizeof(Type)),
          "cublasLtMatmulDescSetAttribute");
  }
  const int64_t ASize = M * K, BSize = K * N, OutSize = M * N;
  // Stored b: K x N row-major is N x K column-major (ld N), else N x K
  // row-major is K x N column-major (ld K); likewise a.
  layout(Kr.BLayout, Type, D.transpose_b ? K : N, D.transpose_b ? N : K,
         RunCount, BWhole ? BSize : 0);
  layout(Kr.ALayout, Type, D.transpose_a ? M : K, D.transpose_a ? K : M,
         RunCount, AWhole ? ASize : 0);
  layout(Kr.OutLayout, Type, N, M, RunCount, OutSize);

  LtHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> Pref;
  check(cublasLtMatmulPreferenceCreate(&Pref.Handle),
        "cublasLtMatmulPreferenceCreate");
  uint64_t Limit = Device.WorkspaceBytes;
  check(cublasLtMatmulPreferenceSetAttribute(
            Pref.Handle, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &Limit,
            sizeof(Limit)),
        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t Result{};
  int Found = 0;
  check(cublasLtMatmulAlgoGetHeuristic(Device.CublasLt, Kr.Op.Handle,
                                       Kr.BLayout.Handle, Kr.ALayout.Handle,
                                       Kr.OutLayout.Handle, Kr.OutLayout.Handle,
                                       Pref.Handle, 1, &Result, &Found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (Found < 1)
    throw KernelError("cuBLASLt has no algorithm for this matmul");
  Kr.Algo = Result.algo;
  Kr.WorkspaceBytes = Result.workspaceSize;

  // One call per index of the batch dimensions before the run.
  int64_t Outer = 1;
  for (size_t I = 0; I < RunBegin; ++I)
    Outer *= Out[I];
  std::vector<int64_t> Index(RunBegin, 0);
  for (int64_t Call = 0; Call < Outer; ++Call) {
    int64_t AIndex = 0, BIndex = 0, OutIndex = 0;
    for (size_t I = 0; I < RunBegin; ++I) {
      AIndex = AIndex * A[I] + (A[I] == 1 ? 0 : Index[I]);
      BIndex = BIndex * B[I] + (B[I] == 1 ? 0 : Index[I]);
      OutIndex = OutIndex * Out[I] + Index[I];
    }
    int64_t ARun = 1, BRun = 1;
    for (size_t I = RunBegin; I < Batch; ++I) {
      ARun *= A[I];
      BRun *= B[I];
    }
    Kr.Calls.push_back({AIndex * ARun * ASize, BIndex * BRun * BSize,
                        OutIndex * RunCount * OutSize});
    for (size_t I = RunBegin; I-- > 0;) {
      if (++Index[I] < Out[I])
        break;
      Index[I] = 0;
    }
  }
  return Kernel;
}

} // namespace

extern "C" fnn_kernel *fnn_matmul_create(fnn_device *Device,
                                         const fnn_matmul_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_matmul_create", Device, Desc,
      [Device](const fnn_matmul_desc &D) { return build(*Device, D); },
      fastnn::runtime::describeMatmul);
}

extern "C" void fnn_matmul_forward(fnn_kernel *Handle, const void *A,
                                   const void *B, const void *Bias,
                                   void *Output) {
  auto &K = static_cast<MatmulKernel &>(*Handle);
  const char *Function = "fnn_matmul_forward";
  if (K.HasBias &&
      !succeeded(cublasLtMatmulDescSetAttribute(
                     K.Op.Handle, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &Bias,
                     sizeof(Bias)),
                 Function, "cublasLtMatmulDescSetAttribute"))
    return;
  auto *ABytes = static_cast<const char *>(A);
  auto *BBytes = static_cast<const char *>(B);
  auto *OutBytes = static_cast<char *>(Output);
  for (const MatmulCall &Call : K.Calls) {
    void *Dst = OutBytes + Call.OutOffset * K.ElementBytes;
    if (!succeeded(cublasLtMatmul(
                       K.Device.CublasLt, K.Op.Handle, &One,
                       BBytes + Call.BOffset * K.ElementBytes, K.BLayout.Handle,
                       ABytes + Call.AOffset * K.ElementBytes, K.ALayout.Handle,
                       &Zero, Dst, K.OutLayout.Handle, Dst, K.OutLayout.Handle,
                       &K.Algo, K.Device.Workspace, K.WorkspaceBytes,
                       K.Device.Compute),
                   Function, "cublasLtMatmul"))
      return;
  }
}
