//===- Softmax.cpp - fnn_softmax on softmax_forward / logsoftmax_forward --===//

#include "Kernel.h"

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, DstSlot };

void build(CpuKernel &K, const fnn_softmax_desc &D) {
  int64_t Axis = fastnn::runtime::checkSoftmaxDesc(D);
  memory::desc DataDesc = denseDesc(toDims(D.input));
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(SrcSlot)}, {DNNL_ARG_DST, K.operand(DstSlot)}};
  if (D.log) {
    dnnl::logsoftmax_forward::primitive_desc PD(
        {dnnl::prop_kind::forward_inference, DataDesc, static_cast<int>(Axis)},
        Attr, K.device().Engine);
    K.addStep(dnnl::logsoftmax_forward(PD), Args, PD.scratchpad_desc());
  } else {
    dnnl::softmax_forward::primitive_desc PD(
        {dnnl::prop_kind::forward_inference, DataDesc, static_cast<int>(Axis)},
        Attr, K.device().Engine);
    K.addStep(dnnl::softmax_forward(PD), Args, PD.scratchpad_desc());
  }
}
} // namespace

extern "C" fnn_kernel *fnn_softmax_create(fnn_device *Device,
                                          const fnn_softmax_desc *Desc) {
  return createKernel("fnn_softmax_create", Device, Desc, build,
                      fastnn::runtime::describeSoftmax);
}

extern "C" void fnn_softmax_forward(fnn_kernel *Handle, const void *Input,
                                    void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
