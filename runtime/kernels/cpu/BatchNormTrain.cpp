//===- BatchNormTrain.cpp - training-mode fnn_batch_norm and its backward -===//
//
// oneDNN batch_normalization with batch statistics (no use_global_stats),
// on float32, bfloat16 or (converted to float32) float16 activations with
// float32 statistics, scale and shift:
// forward_training writes the batch mean and biased variance (outputs
// DNNL_ARG_MEAN/VARIANCE), and the backward (prop_kind::backward,
// use_scale | use_shift) reads them back (inputs) with the input to produce
// grad_input, grad_scale and grad_shift.
//
// oneDNN 2.6's backward with use_shift counts DNNL_ARG_SHIFT among its
// inputs and fails execution with invalid_arguments without it, although the
// gradients do not depend on the shift; the ABI does not pass it, so the
// kernel binds a zeroed buffer of its own there once at create.
//
// fnn_kernel runs all of its steps on every call, so a gradient the caller
// does not want (NULL) goes to a kernel-owned spare buffer, as in
// ConvolutionBackward.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include <cstring>
#include <sstream>
#include <string>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots, in the order the builders add them.
enum ForwardSlot {
  FwSrcSlot,
  FwScaleSlot,
  FwShiftSlot,
  FwDstSlot,
  FwMeanSlot,
  FwVarianceSlot
};
enum BackwardSlot {
  BwSrcSlot,
  BwScaleSlot,
  BwMeanSlot,
  BwVarianceSlot,
  BwDiffDstSlot,
  BwDiffSrcSlot,
  BwDiffScaleSlot,
  BwDiffShiftSlot,
  BwShiftSlot,
  BwSpareDiffSrcSlot,
  BwSpareDiffScaleSlot,
  BwSpareDiffShiftSlot
};

std::string describe(const fnn_batch_norm_desc &D) {
  std::ostringstream S;
  S << "batch_norm (training) input " << shapeText(D.input) << " "
    << layoutName(D.layout) << ", epsilon " << D.epsilon;
  return S.str();
}

const auto Flags =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

/// Checks the desc and returns the forward_training primitive descriptor
/// both kernels are made from, on the layout the primitives run on: the
/// activations' own where oneDNN 2.6 has a jit kernel for it, else nChw16c,
/// which pads the channels to whole blocks, reordered to and from. Its batch
/// norm on plain NCHW is the ncsp implementation (~10x slower than the jit
/// one on nChw16c, slower still in bfloat16), and in bfloat16 on NHWC with
/// a part of a 16-channel block the generic nspc one at ~0.4 GB/s
/// (MobileNet v2's 24-channel batch norms took 44 ms of its 150 ms bf16
/// training step on two cores; the reorders and the jit kernel together
/// are ~30x faster). The data type is the compute type (float16 is
/// converted to float32); statistics, scale and shift are float32 in every
/// case.
dnnl::batch_normalization_forward::primitive_desc
forwardDesc(CpuKernel &K, const fnn_batch_norm_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  if (D.post_op != FNN_POST_NONE)
    throw KernelError("post_op must be FNN_POST_NONE in training (the "
                      "compiler applies the relu and its gradient itself)");
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  auto Create = [&](const memory::desc &Data) {
    return dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(
            dnnl::prop_kind::forward_training, Data,
            static_cast<float>(D.epsilon), Flags),
        makeAttr(FNN_POST_NONE), K.device().Engine);
  };
  memory::desc Plain = activationDesc(D.input, D.layout, computeType(D.dtype));
  auto PD = Create(Plain);
  if (D.input.rank == 4 &&
      std::string(PD.impl_info_str()).find("jit") == std::string::npos)
    return Create(memory::desc(Plain.dims(), Plain.data_type(),
                               memory::format_tag::nChw16c));
  return PD;
}

memory::desc channelDesc(const fnn_batch_norm_desc &D) {
  return memory::desc({activationDesc(D.input, D.layout).dims()[1]},
                      memory::data_type::f32, memory::format_tag::a);
}

void buildForward(CpuKernel &K, const fnn_batch_norm_desc &D) {
  auto PD = forwardDesc(K, D);
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ChannelDesc = channelDesc(D);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  memory Src = K.inputIn(FwSrcSlot, PD.src_desc());
  memory Dst = K.outputIn(FwDstSlot, PD.dst_desc());
  K.addStep(dnnl::batch_normalization_forward(PD),
            {{DNNL_ARG_SRC, Src},
             {DNNL_ARG_SCALE, K.operand(FwScaleSlot)},
             {DNNL_ARG_SHIFT, K.operand(FwShiftSlot)},
             {DNNL_ARG_DST, Dst},
             {DNNL_ARG_MEAN, K.operand(FwMeanSlot)},
             {DNNL_ARG_VARIANCE, K.operand(FwVarianceSlot)}},
            PD.scratchpad_desc());
  K.finishOutput(FwDstSlot, Dst);
}

void buildBackward(CpuKernel &K, const fnn_batch_norm_desc &D) {
  auto Forward = forwardDesc(K, D);
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ComputeDesc = Forward.src_desc();
  memory::desc ChannelDesc = channelDesc(D);
  dnnl::batch_normalization_backward::primitive_desc PD(
      dnnl::batch_normalization_backward::desc(
          dnnl::prop_kind::backward, ComputeDesc, ComputeDesc,
          static_cast<float>(D.epsilon), Flags),
      makeAttr(FNN_POST_NONE), K.device().Engine, Forward);
  K.addOperand(DataDesc);
  for (int I = 0; I < 3; ++I)
    K.addOperand(ChannelDesc);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  K.addOperand(ChannelDesc);
  K.addOperand(ChannelDesc);
  // The ignored shift input, zero, bound once to a kernel-owned buffer; then
  // the spares (grad_input, grad_scale, grad_shift).
  memory Shift = K.addInternal(ChannelDesc);
  std::memset(Shift.get_data_handle(), 0, ChannelDesc.get_size());
  K.addOperand(ChannelDesc);
  K.bind(BwShiftSlot, Shift.get_data_handle());
  K.addSpareOperand(DataDesc);
  K.addSpareOperand(ChannelDesc);
  K.addSpareOperand(ChannelDesc);
  memory Src = K.inputIn(BwSrcSlot, PD.src_desc());
  memory DiffDst = K.inputIn(BwDiffDstSlot, PD.diff_dst_desc());
  memory DiffSrc = K.outputIn(BwDiffSrcSlot, PD.diff_src_desc());
  K.addStep(dnnl::batch_normalization_backward(PD),
            {{DNNL_ARG_SRC, Src},
             {DNNL_ARG_SCALE, K.operand(BwScaleSlot)},
             {DNNL_ARG_SHIFT, K.operand(BwShiftSlot)},
             {DNNL_ARG_MEAN, K.operand(BwMeanSlot)},
             {DNNL_ARG_VARIANCE, K.operand(BwVarianceSlot)},
             {DNNL_ARG_DIFF_DST, DiffDst},
             {DNNL_ARG_DIFF_SRC, DiffSrc},
             {DNNL_ARG_DIFF_SCALE, K.operand(BwDiffScaleSlot)},
             {DNNL_ARG_DIFF_SHIFT, K.operand(BwDiffShiftSlot)}},
            PD.scratchpad_desc());
  K.finishOutput(BwDiffSrcSlot, DiffSrc);
}

} // namespace

extern "C" fnn_kernel *
fnn_batch_norm_train_create(fnn_device *Device,
                            const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_train_create", Device, Desc, buildForward,
                      describe);
}

extern "C" void fnn_batch_norm_train_forward(fnn_kernel *Handle,
                                             const void *Input,
                                             const void *Scale,
                                             const void *Shift, void *Output,
                                             void *Mean, void *Variance) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(FwSrcSlot, Input);
  Kernel->bind(FwScaleSlot, Scale);
  Kernel->bind(FwShiftSlot, Shift);
  Kernel->bind(FwDstSlot, Output);
  Kernel->bind(FwMeanSlot, Mean);
  Kernel->bind(FwVarianceSlot, Variance);
  Kernel->run();
}

extern "C" fnn_kernel *
fnn_batch_norm_backward_create(fnn_device *Device,
                               const fnn_batch_norm_desc *Desc) {
  return createKernel("fnn_batch_norm_backward_create", Device, Desc,
                      buildBackward, describe);
}

extern "C" void fnn_batch_norm_backward(fnn_kernel *Handle, const void *Input,
                                        const void *Scale, const void *Mean,
                                        const void *Variance,
                                        const void *GradOutput, void *GradInput,
                                        void *GradScale, void *GradShift) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(BwSrcSlot, Input);
  Kernel->bind(BwScaleSlot, Scale);
  Kernel->bind(BwMeanSlot, Mean);
  Kernel->bind(BwVarianceSlot, Variance);
  Kernel->bind(BwDiffDstSlot, GradOutput);
  Kernel->bind(BwDiffSrcSlot, Kernel->orSpare(GradInput, BwSpareDiffSrcSlot));
  Kernel->bind(BwDiffScaleSlot,
               Kernel->orSpare(GradScale, BwSpareDiffScaleSlot));
  Kernel->bind(BwDiffShiftSlot,
               Kernel->orSpare(GradShift, BwSpareDiffShiftSlot));
  Kernel->run();
}
