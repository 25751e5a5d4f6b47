//===- Reduction.cpp - fnn_reduce on oneDNN reduction ---------------------===//

#include "Kernel.h"

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order build() adds them.
enum Slot { SrcSlot, DstSlot };

void build(CpuKernel &K, const fnn_reduce_desc &D) {
  bool Reduces = fastnn::runtime::checkReduceShapes(D);
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
  case FNN_REDUCE_MIN:
    Alg = dnnl::algorithm::reduction_min;
    break;
  default:
    throw KernelError("unknown reduction kind " + std::to_string(D.kind));
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
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}
