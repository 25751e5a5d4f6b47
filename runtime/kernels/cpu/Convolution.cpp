//===- Convolution.cpp - fnn_conv2d on oneDNN convolution_forward ---------===//

#include "Kernel.h"

#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, WeightsSlot, BiasSlot, DstSlot };

/// Output extent of one spatial dimension (the floor formula oneDNN checks).
int64_t convExtent(int64_t In, int64_t Kernel, int64_t Stride, int64_t Dilation,
                   int64_t PadBegin, int64_t PadEnd) {
  return (In + PadBegin + PadEnd - ((Kernel - 1) * Dilation + 1)) / Stride + 1;
}

std::string describe(const fnn_conv2d_desc &D) {
  std::ostringstream S;
  S << "conv2d input " << formatShape(D.input) << " " << layoutName(D.layout)
    << ", filter " << formatShape(D.filter) << ", output "
    << formatShape(D.output) << ", groups " << D.groups << ", strides "
    << formatPair(D.strides) << ", pads " << D.pads[0] << "," << D.pads[1]
    << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations) << (D.has_bias ? ", bias" : "")
    << (D.post_op == FNN_POST_RELU ? ", relu" : "");
  return S.str();
}

void build(fnn_kernel &K, const fnn_conv2d_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkPostOp(D.post_op);
  checkShape(D.input, "input", 4, 4);
  checkShape(D.filter, "filter", 4, 4);
  checkShape(D.output, "output", 4, 4);
  bool Nhwc = D.layout == FNN_NHWC;
  auto Channels = [&](const fnn_shape &S) { return S.dims[Nhwc ? 3 : 1]; };
  auto Height = [&](const fnn_shape &S) { return S.dims[Nhwc ? 1 : 2]; };
  auto Width = [&](const fnn_shape &S) { return S.dims[Nhwc ? 2 : 3]; };
  // Filter: OIHW for NCHW, OHWI for NHWC.
  int64_t O = D.filter.dims[0];
  int64_t I = D.filter.dims[Nhwc ? 3 : 1];
  int64_t KH = D.filter.dims[Nhwc ? 1 : 2];
  int64_t KW = D.filter.dims[Nhwc ? 2 : 3];
  int64_t C = Channels(D.input), G = D.groups;
  if (G < 1 || C % G != 0 || O % G != 0 || I * G != C)
    throw KernelError("filter input channels times groups must equal the "
                      "input channels, and groups must divide both channel "
                      "counts");
  if (D.output.dims[0] != D.input.dims[0] || Channels(D.output) != O)
    throw KernelError("output batch or channels do not match input/filter");
  for (int J = 0; J < 2; ++J)
    if (D.strides[J] < 1 || D.dilations[J] < 1 || D.pads[J] < 0 ||
        D.pads[J + 2] < 0)
      throw KernelError("strides and dilations must be >= 1, pads >= 0");
  if (convExtent(Height(D.input), KH, D.strides[0], D.dilations[0], D.pads[0],
                 D.pads[2]) != Height(D.output) ||
      convExtent(Width(D.input), KW, D.strides[1], D.dilations[1], D.pads[1],
                 D.pads[3]) != Width(D.output))
    throw KernelError("output height/width do not follow from input, filter, "
                      "strides, pads and dilations");

  memory::desc SrcDesc = activationDesc(D.input, D.layout);
  memory::desc DstDesc = activationDesc(D.output, D.layout);
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
  memory::desc WeightsDesc(WeightsDims, memory::data_type::f32, WeightsTag);
  memory::desc BiasDesc({O}, memory::data_type::f32, memory::format_tag::a);

  memory::dims Strides = {D.strides[0], D.strides[1]};
  // oneDNN counts dilation from 0 (a dense kernel has dilation 0).
  memory::dims Dilations = {D.dilations[0] - 1, D.dilations[1] - 1};
  memory::dims PadL = {D.pads[0], D.pads[1]};
  memory::dims PadR = {D.pads[2], D.pads[3]};
  // Direct, not auto: auto may pick Winograd, whose rounding error is far
  // above the 1e-5 the kernels are held to.
  auto Desc =
      D.has_bias
          ? dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference,
                dnnl::algorithm::convolution_direct, SrcDesc, WeightsDesc,
                BiasDesc, DstDesc, Strides, Dilations, PadL, PadR)
          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_direct,
                                            SrcDesc, WeightsDesc, DstDesc,
                                            Strides, Dilations, PadL, PadR);
  dnnl::convolution_forward::primitive_desc PD(Desc, makeAttr(D.post_op),
                                               K.device().Engine);

  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(BiasDesc);
  K.addOperand(DstDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(SrcSlot)},
      {DNNL_ARG_WEIGHTS, K.operand(WeightsSlot)},
      {DNNL_ARG_DST, K.operand(DstSlot)}};
  if (D.has_bias)
    Args.push_back({DNNL_ARG_BIAS, K.operand(BiasSlot)});
  K.addStep(dnnl::convolution_forward(PD), Args, PD.scratchpad_desc());
}
} // namespace

extern "C" fnn_kernel *fnn_conv2d_create(fnn_device *Device,
                                         const fnn_conv2d_desc *Desc) {
  return createKernel("fnn_conv2d_create", Device, Desc, build, describe);
}

extern "C" void fnn_conv2d_forward(fnn_kernel *Kernel, const void *Input,
                                   const void *Filter, const void *Bias,
                                   void *Output) {
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(WeightsSlot, Filter);
  Kernel->bind(BiasSlot, Bias);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
