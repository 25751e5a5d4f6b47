//===- Pooling.cpp - fnn_pool2d on oneDNN pooling_v2_forward --------------===//
//
// pooling_v2 rather than pooling because only v2 takes dilations.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include <algorithm>
#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, DstSlot };

std::string describe(const fnn_pool2d_desc &D) {
  std::ostringstream S;
  S << "pool2d " << (D.kind == FNN_POOL_MAX ? "max" : "avg") << " input "
    << formatShape(D.input) << " " << layoutName(D.layout) << ", output "
    << formatShape(D.output) << ", kernel " << formatPair(D.kernel)
    << ", strides " << formatPair(D.strides) << ", pads " << D.pads[0] << ","
    << D.pads[1] << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations)
    << (D.kind == FNN_POOL_AVG && D.count_include_pad ? ", include pad" : "");
  return S.str();
}

/// The end padding that makes oneDNN's floor formula produce \p Out: ceil
/// mode is expressed as extra end padding. Any value in [Needed, Needed +
/// Stride - 1] gives the same windows; the given one is kept when it fits.
int64_t endPadding(int64_t In, int64_t Out, int64_t Range, int64_t Stride,
                   int64_t PadBegin, int64_t PadEnd) {
  int64_t Needed = (Out - 1) * Stride + Range - In - PadBegin;
  return std::min(std::max(PadEnd, Needed), Needed + Stride - 1);
}

void build(fnn_kernel &K, const fnn_pool2d_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkShape(D.input, "input", 4, 4);
  checkShape(D.output, "output", 4, 4);
  if (D.kind != FNN_POOL_MAX && D.kind != FNN_POOL_AVG)
    throw KernelError("unknown pooling kind " + std::to_string(D.kind));
  bool Nhwc = D.layout == FNN_NHWC;
  int C = Nhwc ? 3 : 1, H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;
  if (D.input.dims[0] != D.output.dims[0] ||
      D.input.dims[C] != D.output.dims[C])
    throw KernelError("output batch or channels differ from the input's");
  for (int J = 0; J < 2; ++J)
    if (D.kernel[J] < 1 || D.strides[J] < 1 || D.dilations[J] < 1 ||
        D.pads[J] < 0 || D.pads[J + 2] < 0)
      throw KernelError("kernel, strides and dilations must be >= 1, pads "
                        ">= 0");

  memory::dims PadR(2);
  for (int J = 0; J < 2; ++J) {
    int64_t Range = (D.kernel[J] - 1) * D.dilations[J] + 1;
    int Dim = J == 0 ? H : W;
    PadR[J] = endPadding(D.input.dims[Dim], D.output.dims[Dim], Range,
                         D.strides[J], D.pads[J], D.pads[J + 2]);
  }
  dnnl::algorithm Alg = D.kind == FNN_POOL_MAX ? dnnl::algorithm::pooling_max
                        : D.count_include_pad
                            ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding;
  memory::desc SrcDesc = activationDesc(D.input, D.layout);
  memory::desc DstDesc = activationDesc(D.output, D.layout);
  dnnl::pooling_v2_forward::desc Desc(
      dnnl::prop_kind::forward_inference, Alg, SrcDesc, DstDesc,
      {D.strides[0], D.strides[1]}, {D.kernel[0], D.kernel[1]},
      // oneDNN counts dilation from 0.
      {D.dilations[0] - 1, D.dilations[1] - 1}, {D.pads[0], D.pads[1]}, PadR);
  dnnl::pooling_v2_forward::primitive_desc PD(Desc, makeAttr(FNN_POST_NONE),
                                              K.device().Engine);
  K.addOperand(SrcDesc);
  K.addOperand(DstDesc);
  K.addStep(
      dnnl::pooling_v2_forward(PD),
      {{DNNL_ARG_SRC, K.operand(SrcSlot)}, {DNNL_ARG_DST, K.operand(DstSlot)}},
      PD.scratchpad_desc());
}
} // namespace

extern "C" fnn_kernel *fnn_pool2d_create(fnn_device *Device,
                                         const fnn_pool2d_desc *Desc) {
  return createKernel("fnn_pool2d_create", Device, Desc, build, describe);
}

extern "C" void fnn_pool2d_forward(fnn_kernel *Kernel, const void *Input,
                                   void *Output) {
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
