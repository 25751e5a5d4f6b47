//===- Normalization.cpp - fnn_batch_norm and fnn_lrn ---------------------===//

#include "Kernel.h"

#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order the builders add them.
enum BatchNormSlot {
  BnSrcSlot,
  BnScaleSlot,
  BnShiftSlot,
  BnMeanSlot,
  BnVarianceSlot,
  BnDstSlot
};
enum LrnSlot { LrnSrcSlot, LrnDstSlot };

std::string describeBatchNorm(const fnn_batch_norm_desc &D) {
  std::ostringstream S;
  S << "batch_norm input " << formatShape(D.input) << " "
    << layoutName(D.layout) << ", epsilon " << D.epsilon
    << (D.post_op == FNN_POST_RELU ? ", relu" : "");
  return S.str();
}

void buildBatchNorm(fnn_kernel &K, const fnn_batch_norm_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkPostOp(D.post_op);
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  int64_t C = DataDesc.dims()[1];
  // Statistics and affine parameters are f32 per channel in oneDNN 2.6,
  // given as separate scale and shift memories (use_scale | use_shift, not
  // the older packed use_scaleshift).
  memory::desc ChannelDesc({C}, memory::data_type::f32, memory::format_tag::a);
  auto Flags = dnnl::normalization_flags::use_global_stats |
               dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  // In inference the flag is the fused ReLU (the 2.6 batch norm takes no
  // eltwise post-op).
  if (D.post_op == FNN_POST_RELU)
    Flags = Flags | dnnl::normalization_flags::fuse_norm_relu;
  dnnl::batch_normalization_forward::desc Desc(
      dnnl::prop_kind::forward_inference, DataDesc,
      static_cast<float>(D.epsilon), Flags);
  dnnl::batch_normalization_forward::primitive_desc PD(
      Desc, makeAttr(FNN_POST_NONE), K.device().Engine);
  K.addOperand(DataDesc);
  for (int I = 0; I < 4; ++I)
    K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  K.addStep(dnnl::batch_normalization_forward(PD),
            {{DNNL_ARG_SRC, K.operand(BnSrcSlot)},
             {DNNL_ARG_SCALE, K.operand(BnScaleSlot)},
             {DNNL_ARG_SHIFT, K.operand(BnShiftSlot)},
             {DNNL_ARG_MEAN, K.operand(BnMeanSlot)},
             {DNNL_ARG_VARIANCE, K.operand(BnVarianceSlot)},
             {DNNL_ARG_DST, K.operand(BnDstSlot)}},
            PD.scratchpad_desc());
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
  Kernel->bind(BnSrcSlot, Input);
  Kernel->bind(BnScaleSlot, Scale);
  Kernel->bind(BnShiftSlot, Shift);
  Kernel->bind(BnMeanSlot, Mean);
  Kernel->bind(BnVarianceSlot, Variance);
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
