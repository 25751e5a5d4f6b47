//===- Matmul.cpp - fnn_matmul on oneDNN matmul ---------------------------===//
//
// Shapes are as stored: with transpose_a, a's last two dimensions are K x M
// (and b's N x K with transpose_b). oneDNN sees the logical M x K / K x N
// operands through swapped strides, so no transpose is ever materialised.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { ASlot, BSlot, BiasSlot, DstSlot };

/// \p Shape left-padded with 1s to \p Rank, row-major strides, and the last
/// two dimensions swapped (in dims and strides) when \p Transposed.
memory::desc operandDesc(const fnn_shape &Shape, size_t Rank, bool Transposed,
                         memory::data_type Type) {
  memory::dims Dims(Rank - Shape.rank, 1);
  Dims.insert(Dims.end(), Shape.dims, Shape.dims + Shape.rank);
  memory::dims Strides(Rank);
  int64_t Stride = 1;
  for (size_t I = Rank; I-- > 0;) {
    Strides[I] = Stride;
    Stride *= Dims[I];
  }
  if (Transposed) {
    std::swap(Dims[Rank - 1], Dims[Rank - 2]);
    std::swap(Strides[Rank - 1], Strides[Rank - 2]);
  }
  return memory::desc(Dims, Type, Strides);
}

void build(CpuKernel &K, const fnn_matmul_desc &D) {
  fastnn::runtime::checkMatmulDesc(D);
  size_t Rank = D.output.rank;
  const memory::data_type Storage = storageType(D.dtype);
  const memory::data_type Compute = computeType(D.dtype);
  memory::desc ADesc = operandDesc(D.a, Rank, D.transpose_a, Storage);
  memory::desc BDesc = operandDesc(D.b, Rank, D.transpose_b, Storage);
  memory::desc DstDesc = denseDesc(toDims(D.output), Storage);
  memory::dims A = ADesc.dims(), B = BDesc.dims(), Out = DstDesc.dims();
  if (A[Rank - 1] != B[Rank - 2] || A[Rank - 2] != Out[Rank - 2] ||
      B[Rank - 1] != Out[Rank - 1])
    throw KernelError("inner or outer dimensions do not match");
  for (size_t I = 0; I + 2 < Rank; ++I)
    if ((A[I] != 1 && A[I] != Out[I]) || (B[I] != 1 && B[I] != Out[I]))
      throw KernelError("batch dimensions of a or b do not broadcast to the "
                        "output's");
  // The bias is one row, broadcast over every other dimension.
  memory::dims BiasDims(Rank, 1);
  BiasDims[Rank - 1] = Out[Rank - 1];
  memory::desc BiasDesc = denseDesc(BiasDims, Storage);
  // float16 operands are converted to float32 for the primitive (see
  // computeType); other types are used as they are.
  auto Computed = [&](const memory::desc &M) { return withType(M, Compute); };
  // A constant b is reordered once into the layout oneDNN prefers (its
  // brgemm matmul otherwise repacks a plain b on every call).
  memory::desc WeightsDesc =
      D.constant_b ? memory::desc(B, Compute, memory::format_tag::any)
                   : Computed(BDesc);
  auto Desc =
      D.has_bias
          ? dnnl::matmul::desc(Computed(ADesc), WeightsDesc, Computed(BiasDesc),
                               Computed(DstDesc))
          : dnnl::matmul::desc(Computed(ADesc), WeightsDesc, Computed(DstDesc));
  dnnl::matmul::primitive_desc PD(Desc, makeAttr(D.post_op), K.device().Engine);
  K.addOperand(ADesc);
  K.addOperand(BDesc);
  K.addOperand(BiasDesc);
  K.addOperand(DstDesc);
  memory Dst = K.outputIn(DstSlot, PD.dst_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.inputIn(ASlot, PD.src_desc())},
      {DNNL_ARG_WEIGHTS, D.constant_b
                             ? K.constantInputIn(BSlot, PD.weights_desc())
                             : K.inputIn(BSlot, PD.weights_desc())},
      {DNNL_ARG_DST, Dst}};
  if (D.has_bias)
    Args.push_back({DNNL_ARG_BIAS, K.inputIn(BiasSlot, PD.bias_desc())});
  K.addStep(dnnl::matmul(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DstSlot, Dst);
}
} // namespace

extern "C" fnn_kernel *fnn_matmul_create(fnn_device *Device,
                                         const fnn_matmul_desc *Desc) {
  return createKernel("fnn_matmul_create", Device, Desc, build,
                      fastnn::runtime::describeMatmul);
}

extern "C" void fnn_matmul_forward(fnn_kernel *Handle, const void *A,
                                   const void *B, const void *Bias,
                                   void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(ASlot, A);
  Kernel->bind(BSlot, B);
  Kernel->bind(BiasSlot, Bias);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
