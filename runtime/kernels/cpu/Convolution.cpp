//===- Convolution.cpp - fnn_conv2d on oneDNN convolution_forward ---------===//

#include "Kernel.h"

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, WeightsSlot, BiasSlot, DstSlot };

void build(CpuKernel &K, const fnn_conv2d_desc &D) {
  fastnn::runtime::checkConv2dOperands(D);
  fastnn::runtime::checkConv2dGeometry(D);
  bool Nhwc = D.layout == FNN_NHWC;
  const fastnn::runtime::Conv2dFilter F = fastnn::runtime::conv2dFilter(D);
  int64_t O = F.Out, I = F.In, KH = F.Height, KW = F.Width;
  int64_t C = D.input.dims[Nhwc ? 3 : 1], G = D.groups;

  const memory::data_type Storage = storageType(D.dtype);
  const memory::data_type Compute = computeType(D.dtype);
  memory::desc SrcDesc = activationDesc(D.input, D.layout, Storage);
  memory::desc DstDesc = activationDesc(D.output, D.layout, Storage);
  // Plain OIHW/OHWI viewed as oneDNN's (G, O/G, I, H, W) when grouped: the
  // group is the outer part of O, so the bytes are the same.
  memory::format_tag WeightsTag;
  memory::dims WeightsDims;
  if (G == 1) {
    WeightsDims = {O, I, KH, KW};
    WeightsTag = Nhwc ? memory::format_tag::ohwi : memory::format_tag::oihw;
  } else {
    WeightsDims = {G, O / G, I, KH, KW};
    WeightsTag = Nhwc ? memory::format_tag::gohwi : memory::format_tag::goihw;
  }
  memory::desc WeightsDesc(WeightsDims, Storage, WeightsTag);
  memory::desc BiasDesc({O}, Storage, memory::format_tag::a);

  memory::dims Strides = {D.strides[0], D.strides[1]};
  // oneDNN counts dilation from 0 (a dense kernel has dilation 0).
  memory::dims Dilations = {D.dilations[0] - 1, D.dilations[1] - 1};
  memory::dims PadL = {D.pads[0], D.pads[1]};
  memory::dims PadR = {D.pads[2], D.pads[3]};
  // Direct, not auto: auto may pick Winograd, whose rounding error is far
  // above the 1e-5 the kernels are held to.
  auto Create = [&](const memory::desc &Src, const memory::desc &Dst) {
    memory::desc Weights(WeightsDims, Compute, memory::format_tag::any);
    auto Desc = D.has_bias ? dnnl::convolution_forward::desc(
                                 dnnl::prop_kind::forward_inference,
                                 dnnl::algorithm::convolution_direct, Src,
                                 Weights, withType(BiasDesc, Compute), Dst,
                                 Strides, Dilations, PadL, PadR)
                           : dnnl::convolution_forward::desc(
                                 dnnl::prop_kind::forward_inference,
                                 dnnl::algorithm::convolution_direct, Src,
                                 Weights, Dst, Strides, Dilations, PadL, PadR);
    return dnnl::convolution_forward::primitive_desc(Desc, makeAttr(D.post_op),
                                                     K.device().Engine);
  };
  // On plain NCHW oneDNN 2.6 only has its gemm-based convolution (im2col,
  // and a malloc per call); its jit direct convolutions want channel-blocked
  // activations. Of those, nChw16c rather than the nhwc that format_tag::any
  // picks here (brgconv): the jit convolutions are as fast on it, and the
  // NCHW <-> nChw16c reorders the kernel adds around the call run ~3x faster
  // than NCHW <-> NHWC ones. An input with fewer than 16 channels stays
  // NCHW (the jit first-layer kernel reads it directly). NHWC operands are
  // used as they are (brgconv). The weights are always left to oneDNN:
  // reordered once when the caller promises constant weights (inference),
  // else on every call (training updates them in place).
  auto Blocked = [&](const memory::desc &Plain) {
    return memory::desc(Plain.dims(), Compute, memory::format_tag::nChw16c);
  };
  memory::desc ConvSrc = withType(SrcDesc, Compute),
               ConvDst = withType(DstDesc, Compute);
  if (!Nhwc) {
    ConvSrc = G == 1 && C < 16 ? ConvSrc : Blocked(SrcDesc);
    ConvDst = Blocked(DstDesc);
  }
  dnnl::convolution_forward::primitive_desc PD;
  try {
    PD = Create(ConvSrc, ConvDst);
  } catch (const dnnl::error &) {
  }
  // Some shapes (grouped convolutions whose groups are not whole channel
  // blocks) have no jit implementation on these layouts, only the reference
  // one: then oneDNN chooses the layouts itself.
  if (!PD || std::string(PD.impl_info_str()).rfind("ref", 0) == 0) {
    auto Any = [&](const memory::desc &M) {
      return memory::desc(M.dims(), Compute, memory::format_tag::any);
    };
    PD = Create(Any(SrcDesc), Any(DstDesc));
  }

  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(BiasDesc);
  K.addOperand(DstDesc);
  memory Src = K.inputIn(SrcSlot, PD.src_desc());
  memory Weights = D.constant_filter
                       ? K.constantInputIn(WeightsSlot, PD.weights_desc())
                       : K.inputIn(WeightsSlot, PD.weights_desc());
  // Accumulating, the primitive's sum post-op reads the output's contents.
  memory Dst = D.post_op & FNN_POST_ACCUMULATE
                   ? K.inputIn(DstSlot, PD.dst_desc())
                   : K.outputIn(DstSlot, PD.dst_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, Src}, {DNNL_ARG_WEIGHTS, Weights}, {DNNL_ARG_DST, Dst}};
  if (D.has_bias)
    Args.push_back({DNNL_ARG_BIAS, K.inputIn(BiasSlot, PD.bias_desc())});
  K.addStep(dnnl::convolution_forward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DstSlot, Dst);
}
} // namespace

extern "C" fnn_kernel *fnn_conv2d_create(fnn_device *Device,
                                         const fnn_conv2d_desc *Desc) {
  return createKernel("fnn_conv2d_create", Device, Desc, build,
                      [](const fnn_conv2d_desc &D) {
                        return fastnn::runtime::describeConv2d(D, "");
                      });
}

extern "C" void fnn_conv2d_forward(fnn_kernel *Handle, const void *Input,
                                   const void *Filter, const void *Bias,
                                   void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(WeightsSlot, Filter);
  Kernel->bind(BiasSlot, Bias);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
