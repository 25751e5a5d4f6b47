//===- ConvolutionBackward.cpp - fnn_conv2d_backward on oneDNN ------------===//
//
// Two steps: convolution_backward_data (grad_input) and
// convolution_backward_weights (grad_filter and grad_bias), both made from a
// forward_training primitive descriptor as oneDNN requires.
//
// fnn_kernel runs all of its steps on every call, so a gradient the caller
// does not want (NULL) is written into a kernel-owned spare buffer instead of
// being skipped; the spares are operands bound once at create time, which is
// how the call finds them again.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot {
  SrcSlot,
  WeightsSlot,
  DiffDstSlot,
  DiffSrcSlot,
  DiffWeightsSlot,
  DiffBiasSlot,
  SpareDiffSrcSlot,
  SpareDiffWeightsSlot,
  SpareDiffBiasSlot
};

std::string describe(const fnn_conv2d_desc &D) {
  std::ostringstream S;
  S << "conv2d backward input " << formatShape(D.input) << " "
    << layoutName(D.layout) << ", filter " << formatShape(D.filter)
    << ", output " << formatShape(D.output) << ", groups " << D.groups
    << ", strides " << formatPair(D.strides) << ", pads " << D.pads[0] << ","
    << D.pads[1] << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations) << (D.has_bias ? ", bias" : "");
  return S.str();
}

void build(fnn_kernel &K, const fnn_conv2d_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  if (D.post_op != FNN_POST_NONE)
    throw KernelError("post_op must be FNN_POST_NONE (the compiler applies "
                      "the relu gradient itself)");
  checkShape(D.input, "input", 4, 4);
  checkShape(D.filter, "filter", 4, 4);
  checkShape(D.output, "output", 4, 4);
  bool Nhwc = D.layout == FNN_NHWC;
  int64_t O = D.filter.dims[0];
  int64_t I = D.filter.dims[Nhwc ? 3 : 1];
  int64_t KH = D.filter.dims[Nhwc ? 1 : 2];
  int64_t KW = D.filter.dims[Nhwc ? 2 : 3];
  int64_t C = D.input.dims[Nhwc ? 3 : 1], G = D.groups;
  if (G < 1 || O % G != 0 || I * G != C)
    throw KernelError("filter input channels times groups must equal the "
                      "input channels, and groups must divide the output "
                      "channels");
  for (int J = 0; J < 2; ++J)
    if (D.strides[J] < 1 || D.dilations[J] < 1 || D.pads[J] < 0 ||
        D.pads[J + 2] < 0)
      throw KernelError("strides and dilations must be >= 1, pads >= 0");

  memory::desc SrcDesc = activationDesc(D.input, D.layout);
  memory::desc DstDesc = activationDesc(D.output, D.layout);
  // Grouped OIHW/OHWI is oneDNN's (G, O/G, I, H, W): same bytes.
  memory::desc WeightsDesc =
      G == 1 ? memory::desc({O, I, KH, KW}, memory::data_type::f32,
                            Nhwc ? memory::format_tag::ohwi
                                 : memory::format_tag::oihw)
             : memory::desc({G, O / G, I, KH, KW}, memory::data_type::f32,
                            Nhwc ? memory::format_tag::gohwi
                                 : memory::format_tag::goihw);
  memory::desc BiasDesc({O}, memory::data_type::f32, memory::format_tag::a);
  memory::dims Strides = {D.strides[0], D.strides[1]};
  // oneDNN counts dilation from 0.
  memory::dims Dilations = {D.dilations[0] - 1, D.dilations[1] - 1};
  memory::dims PadL = {D.pads[0], D.pads[1]};
  memory::dims PadR = {D.pads[2], D.pads[3]};
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);

  // Direct, not auto, for the same reason as the forward kernel: Winograd's
  // rounding error is far above what the gradients are held to.
  auto Algorithm = dnnl::algorithm::convolution_direct;
  auto ForwardDesc =
      D.has_bias
          ? dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_training, Algorithm, SrcDesc,
                WeightsDesc, BiasDesc, DstDesc, Strides, Dilations, PadL, PadR)
          : dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_training, Algorithm, SrcDesc,
                WeightsDesc, DstDesc, Strides, Dilations, PadL, PadR);
  dnnl::convolution_forward::primitive_desc Forward(ForwardDesc, Attr, Engine);
  dnnl::convolution_backward_data::primitive_desc Data(
      dnnl::convolution_backward_data::desc(Algorithm, SrcDesc, WeightsDesc,
                                            DstDesc, Strides, Dilations, PadL,
                                            PadR),
      Attr, Engine, Forward);
  auto WeightsBackwardDesc =
      D.has_bias ? dnnl::convolution_backward_weights::desc(
                       Algorithm, SrcDesc, WeightsDesc, BiasDesc, DstDesc,
                       Strides, Dilations, PadL, PadR)
                 : dnnl::convolution_backward_weights::desc(
                       Algorithm, SrcDesc, WeightsDesc, DstDesc, Strides,
                       Dilations, PadL, PadR);
  dnnl::convolution_backward_weights::primitive_desc Weights(
      WeightsBackwardDesc, Attr, Engine, Forward);

  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(DstDesc);
  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(BiasDesc);
  const memory::desc Spares[] = {SrcDesc, WeightsDesc, BiasDesc};
  for (int J = 0; J < 3; ++J) {
    memory Buffer = K.addInternal(Spares[J]);
    K.addOperand(Spares[J]);
    K.bind(SpareDiffSrcSlot + J, Buffer.get_data_handle());
  }
  K.addStep(dnnl::convolution_backward_data(Data),
            {{DNNL_ARG_DIFF_DST, K.operand(DiffDstSlot)},
             {DNNL_ARG_WEIGHTS, K.operand(WeightsSlot)},
             {DNNL_ARG_DIFF_SRC, K.operand(DiffSrcSlot)}},
            Data.scratchpad_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(SrcSlot)},
      {DNNL_ARG_DIFF_DST, K.operand(DiffDstSlot)},
      {DNNL_ARG_DIFF_WEIGHTS, K.operand(DiffWeightsSlot)}};
  if (D.has_bias)
    Args.push_back({DNNL_ARG_DIFF_BIAS, K.operand(DiffBiasSlot)});
  K.addStep(dnnl::convolution_backward_weights(Weights), Args,
            Weights.scratchpad_desc());
}

/// The caller's pointer, or the kernel's spare buffer when it passed NULL.
void *orSpare(fnn_kernel *Kernel, void *Data, Slot Spare) {
  if (Data)
    return Data;
  void *Handle = nullptr;
  dnnl_memory_get_data_handle(Kernel->operand(Spare).get(), &Handle);
  return Handle;
}
} // namespace

extern "C" fnn_kernel *fnn_conv2d_backward_create(fnn_device *Device,
                                                  const fnn_conv2d_desc *Desc) {
  return createKernel("fnn_conv2d_backward_create", Device, Desc, build,
                      describe);
}

extern "C" void fnn_conv2d_backward(fnn_kernel *Kernel, const void *Input,
                                    const void *Filter, const void *GradOutput,
                                    void *GradInput, void *GradFilter,
                                    void *GradBias) {
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(WeightsSlot, Filter);
  Kernel->bind(DiffDstSlot, GradOutput);
  Kernel->bind(DiffSrcSlot, orSpare(Kernel, GradInput, SpareDiffSrcSlot));
  Kernel->bind(DiffWeightsSlot,
               orSpare(Kernel, GradFilter, SpareDiffWeightsSlot));
  Kernel->bind(DiffBiasSlot, orSpare(Kernel, GradBias, SpareDiffBiasSlot));
  Kernel->run();
}
