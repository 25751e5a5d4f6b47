//===- Pooling.cpp - fnn_pool2d and its backward on oneDNN pooling_v2 -----===//
//
// pooling_v2 rather than pooling because only v2 takes dilations.
//
// The inference, training and backward kernels all derive their oneDNN
// descriptor from the fnn_pool2d_desc the same way (poolingDesc), so the
// padding_r that encodes ceil mode, and with it every window, agrees between
// a forward and its backward. A training max-pooling kernel writes oneDNN's
// workspace (the argmax of each window) to a SavedWorkspace; its backward
// kernel shares that buffer.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include <algorithm>
#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Operand slots of the forward kernels, in the order buildForward() adds
/// them.
enum Slot { SrcSlot, DstSlot };
/// Operand slots of the backward kernel.
enum BackwardSlot { DiffDstSlot, DiffSrcSlot };

/// A training max-pooling kernel's state; its own type so that a backward
/// kernel is not made from another op's workspace.
struct PoolWorkspace final : SavedWorkspace {
  using SavedWorkspace::SavedWorkspace;
};

std::string describe(const fnn_pool2d_desc &D) {
  std::ostringstream S;
  S << "pool2d " << (D.kind == FNN_POOL_MAX ? "max" : "avg") << " input "
    << shapeText(D.input) << " " << layoutName(D.layout) << ", output "
    << shapeText(D.output) << ", kernel " << formatPair(D.kernel)
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

dnnl::algorithm algorithm(const fnn_pool2d_desc &D) {
  return D.kind == FNN_POOL_MAX ? dnnl::algorithm::pooling_max
         : D.count_include_pad  ? dnnl::algorithm::pooling_avg_include_padding
                                : dnnl::algorithm::pooling_avg_exclude_padding;
}

/// An operand as the kernel's caller stores it, and as the primitives take
/// it (float16 is converted to float32, see computeType).
memory::desc operandDesc(const fnn_pool2d_desc &D, const fnn_shape &Shape) {
  return activationDesc(Shape, D.layout, storageType(D.dtype));
}
memory::desc computeDesc(const fnn_pool2d_desc &D, const fnn_shape &Shape) {
  return activationDesc(Shape, D.layout, computeType(D.dtype));
}

/// Checks \p D and returns the forward descriptor every pooling kernel of
/// \p D is made from.
dnnl::pooling_v2_forward::desc poolingDesc(const fnn_pool2d_desc &D,
                                           dnnl::prop_kind PropKind) {
  fastnn::runtime::checkPool2dDesc(D);
  bool Nhwc = D.layout == FNN_NHWC;
  int H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;

  memory::dims PadR(2);
  for (int J = 0; J < 2; ++J) {
    int64_t Range = (D.kernel[J] - 1) * D.dilations[J] + 1;
    int Dim = J == 0 ? H : W;
    PadR[J] = endPadding(D.input.dims[Dim], D.output.dims[Dim], Range,
                         D.strides[J], D.pads[J], D.pads[J + 2]);
  }
  return dnnl::pooling_v2_forward::desc(
      PropKind, algorithm(D), computeDesc(D, D.input), computeDesc(D, D.output),
      {D.strides[0], D.strides[1]}, {D.kernel[0], D.kernel[1]},
      // oneDNN counts dilation from 0.
      {D.dilations[0] - 1, D.dilations[1] - 1}, {D.pads[0], D.pads[1]}, PadR);
}

void buildForward(CpuKernel &K, const fnn_pool2d_desc &D,
                  dnnl::prop_kind PropKind) {
  dnnl::pooling_v2_forward::primitive_desc PD(
      poolingDesc(D, PropKind), makeAttr(FNN_POST_NONE), K.device().Engine);
  K.addOperand(operandDesc(D, D.input));
  K.addOperand(operandDesc(D, D.output));
  memory Dst = K.outputIn(DstSlot, PD.dst_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.inputIn(SrcSlot, PD.src_desc())}, {DNNL_ARG_DST, Dst}};
  // Only max pooling has a workspace, and only when training.
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0) {
    auto Saved =
        std::make_unique<PoolWorkspace>(K.device().Engine, WorkspaceDesc);
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    K.setState(std::move(Saved));
  }
  K.addStep(dnnl::pooling_v2_forward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DstSlot, Dst);
}

void buildInference(CpuKernel &K, const fnn_pool2d_desc &D) {
  buildForward(K, D, dnnl::prop_kind::forward_inference);
}

void buildTraining(CpuKernel &K, const fnn_pool2d_desc &D) {
  buildForward(K, D, dnnl::prop_kind::forward_training);
}

void buildBackward(CpuKernel &K, const fnn_pool2d_desc &D,
                   const CpuKernel *Forward) {
  dnnl::pooling_v2_forward::desc ForwardDesc =
      poolingDesc(D, dnnl::prop_kind::forward_training);
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  dnnl::pooling_v2_forward::primitive_desc Hint(ForwardDesc, Attr, Engine);
  memory::desc SrcDesc = computeDesc(D, D.input);
  memory::desc DstDesc = computeDesc(D, D.output);
  dnnl::pooling_v2_backward::primitive_desc PD(
      // The forward's padding_r, for the same windows.
      dnnl::pooling_v2_backward::desc(
          algorithm(D), SrcDesc, DstDesc, {D.strides[0], D.strides[1]},
          {D.kernel[0], D.kernel[1]}, {D.dilations[0] - 1, D.dilations[1] - 1},
          {D.pads[0], D.pads[1]},
          {ForwardDesc.data.padding[1][0], ForwardDesc.data.padding[1][1]}),
      Attr, Engine, Hint);
  K.addOperand(operandDesc(D, D.output));
  K.addOperand(operandDesc(D, D.input));
  memory DiffSrc = K.outputIn(DiffSrcSlot, PD.diff_src_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_DIFF_DST, K.inputIn(DiffDstSlot, PD.diff_dst_desc())},
      {DNNL_ARG_DIFF_SRC, DiffSrc}};
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0) {
    // Max pooling routes each gradient to the argmax the forward kernel
    // saved on its last run.
    const PoolWorkspace *Saved =
        Forward ? Forward->findState<PoolWorkspace>() : nullptr;
    if (!Saved)
      throw KernelError("max pooling's backward needs the kernel of its "
                        "forward, made by fnn_pool2d_train_create");
    if (&Forward->device() != &K.device())
      throw KernelError("the forward kernel belongs to another device");
    if (Saved->Memory.get_desc() != WorkspaceDesc)
      throw KernelError("the forward kernel was made from a different "
                        "descriptor");
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    K.setState(std::make_unique<PoolWorkspace>(*Saved));
  }
  K.addStep(dnnl::pooling_v2_backward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(DiffSrcSlot, DiffSrc);
}
} // namespace

extern "C" fnn_kernel *fnn_pool2d_create(fnn_device *Device,
                                         const fnn_pool2d_desc *Desc) {
  return createKernel("fnn_pool2d_create", Device, Desc, buildInference,
                      describe);
}

extern "C" fnn_kernel *fnn_pool2d_train_create(fnn_device *Device,
                                               const fnn_pool2d_desc *Desc) {
  return createKernel("fnn_pool2d_train_create", Device, Desc, buildTraining,
                      describe);
}

extern "C" void fnn_pool2d_forward(fnn_kernel *Handle, const void *Input,
                                   void *Output) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(DstSlot, Output);
  Kernel->run();
}

extern "C" fnn_kernel *fnn_pool2d_backward_create(fnn_device *Device,
                                                  const fnn_pool2d_desc *Desc,
                                                  fnn_kernel *Forward) {
  return createKernel(
      "fnn_pool2d_backward_create", Device, Desc,
      [Forward](CpuKernel &K, const fnn_pool2d_desc &D) {
        buildBackward(K, D, CpuKernel::find(Forward));
      },
      describe);
}

extern "C" void fnn_pool2d_backward(fnn_kernel *Handle, const void *GradOutput,
                                    void *GradInput) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(DiffDstSlot, GradOutput);
  Kernel->bind(DiffSrcSlot, GradInput);
  Kernel->run();
}
