//===- Normalization.cpp - fnn_batch_norm and fnn_lrn ---------------------===//

#include "Kernel.h"

#include <cmath>
#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order the builders add them.
/// Scale, shift, mean and variance are read by forward itself (see
/// BatchNormFold), so only the data has operand slots.
enum BatchNormSlot { BnSrcSlot, BnDstSlot };
enum LrnSlot { LrnSrcSlot, LrnDstSlot };

std::string describeBatchNorm(const fnn_batch_norm_desc &D) {
  std::ostringstream S;
  S << "batch_norm input " << formatShape(D.input) << " "
    << layoutName(D.layout) << ", epsilon " << D.epsilon
    << (D.post_op == FNN_POST_RELU ? ", relu" : "");
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

void buildBatchNorm(fnn_kernel &K, const fnn_batch_norm_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkPostOp(D.post_op);
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  memory::desc DataDesc = activationDesc(D.input, D.layout);
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
      dnnl::binary::desc(dnnl::algorithm::binary_mul, DataDesc, ChannelDesc,
                         DataDesc),
      Attr, K.device().Engine);

  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  memory A = K.addInternal(ChannelDesc), B = K.addInternal(ChannelDesc);
  K.addStep(dnnl::binary(PD),
            {{DNNL_ARG_SRC_0, K.operand(BnSrcSlot)},
             {DNNL_ARG_SRC_1, A},
             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, B},
             {DNNL_ARG_DST, K.operand(BnDstSlot)}},
            PD.scratchpad_desc());
  auto Fold = std::make_unique<BatchNormFold>();
  Fold->Channels = ChannelDims[1];
  Fold->Epsilon = D.epsilon;
  Fold->A = static_cast<float *>(A.get_data_handle());
  Fold->B = static_cast<float *>(B.get_data_handle());
  K.setState(std::move(Fold));
}

std::string describeLrn(const fnn_lrn_desc &D) {
  std::ostringstream S;
  S << "lrn input " << formatShape(D.input) << " " << layoutName(D.layout)
    << ", size " << D.size << ", alpha " << D.alpha << ", beta " << D.beta
    << ", bias " << D.bias;
  return S.str();
}

void buildLrn(fnn_kernel &K, const fnn_lrn_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkShape(D.input, "input", 4, 4);
  // ONNX's window for an even size is one channel longer after than before;
  // oneDNN's is symmetric ((size - 1) / 2 each side), so only odd sizes
  // agree. Image models use 3 or 5.
  if (D.size < 1 || D.size % 2 == 0)
    throw KernelError("size must be odd and positive");
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  // oneDNN computes x / (k + alpha / size * sum x^2)^beta, already dividing
  // alpha by the window size as ONNX does, so alpha passes through as is.
  dnnl::lrn_forward::desc Desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels,
      DataDesc, D.size, static_cast<float>(D.alpha), static_cast<float>(D.beta),
      static_cast<float>(D.bias));
  dnnl::lrn_forward::primitive_desc PD(Desc, makeAttr(FNN_POST_NONE),
                                       K.device().Engine);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  K.addStep(dnnl::lrn_forward(PD),
            {{DNNL_ARG_SRC, K.operand(LrnSrcSlot)},
             {DNNL_ARG_DST, K.operand(LrnDstSlot)}},
            PD.scratchpad_desc());
}
} // namespace

extern "C" fnn_kernel *fnn_batch_norm_create(fnn_device *Device,
                                             const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_create", Device, Desc, buildBatchNorm,
                      describeBatchNorm);
}

extern "C" void fnn_batch_norm_forward(fnn_kernel *Kernel, const void *Input,
                                       const void *Scale, const void *Shift,
                                       const void *Mean, const void *Variance,
                                       void *Output) {
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
  return createKernel("fnn_lrn_create", Device, Desc, buildLrn, describeLrn);
}

extern "C" void fnn_lrn_forward(fnn_kernel *Kernel, const void *Input,
                                void *Output) {
  Kernel->bind(LrnSrcSlot, Input);
  Kernel->bind(LrnDstSlot, Output);
  Kernel->run();
}
