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
enum LrnBackwardSlot { LrnBwSrcSlot, LrnBwDiffDstSlot, LrnBwDiffSrcSlot };

/// A training LRN kernel's state (oneDNN's workspace holds the per-element
/// denominator); its own type so that a backward kernel is not made from
/// another op's workspace.
struct LrnWorkspace final : SavedWorkspace {
  using SavedWorkspace::SavedWorkspace;
};

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
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  checkPostOp(D.post_op);
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  // Low-precision activations with float32 A and B (see computeType for
  // float16).
  memory::desc DataDesc =
      activationDesc(D.input, D.layout, storageType(D.dtype));
  memory::desc ComputeDesc = withType(DataDesc, computeType(D.dtype));
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
      dnnl::binary::desc(dnnl::algorithm::binary_mul, ComputeDesc, ChannelDesc,
                         ComputeDesc),
      Attr, K.device().Engine);

  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  memory A = K.addInternal(ChannelDesc), B = K.addInternal(ChannelDesc);
  memory Src = K.inputIn(BnSrcSlot, ComputeDesc);
  memory Dst = K.outputIn(BnDstSlot, ComputeDesc);
  K.addStep(dnnl::binary(PD),
            {{DNNL_ARG_SRC_0, Src},
             {DNNL_ARG_SRC_1, A},
             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, B},
             {DNNL_ARG_DST, Dst}},
            PD.scratchpad_desc());
  K.finishOutput(BnDstSlot, Dst);
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

/// Checks \p D and returns the forward descriptor every LRN kernel of \p D
/// is made from.
dnnl::lrn_forward::desc lrnDesc(const fnn_lrn_desc &D,
                                dnnl::prop_kind PropKind) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkShape(D.input, "input", 4, 4);
  // ONNX's window for an even size is one channel longer after than before;
  // oneDNN's is symmetric ((size - 1) / 2 each side), so only odd sizes
  // agree. Image models use 3 or 5.
  if (D.size < 1 || D.size % 2 == 0)
    throw KernelError("size must be odd and positive");
  // oneDNN computes x / (k + alpha / size * sum x^2)^beta, already dividing
  // alpha by the window size as ONNX does, so alpha passes through as is.
  return dnnl::lrn_forward::desc(
      PropKind, dnnl::algorithm::lrn_across_channels,
      activationDesc(D.input, D.layout), D.size, static_cast<float>(D.alpha),
      static_cast<float>(D.beta), static_cast<float>(D.bias));
}

void buildLrnForward(fnn_kernel &K, const fnn_lrn_desc &D,
                     dnnl::prop_kind PropKind) {
  dnnl::lrn_forward::primitive_desc PD(
      lrnDesc(D, PropKind), makeAttr(FNN_POST_NONE), K.device().Engine);
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(LrnSrcSlot)},
      {DNNL_ARG_DST, K.operand(LrnDstSlot)}};
  // Training keeps the workspace its backward reads. Some implementations
  // (oneDNN's reference one, on plain NCHW) have none and recompute; the
  // state is set regardless, so that the backward checks its forward kernel
  // the same way on every machine.
  if (PropKind == dnnl::prop_kind::forward_training) {
    auto Saved =
        std::make_unique<LrnWorkspace>(K.device().Engine, PD.workspace_desc());
    if (Saved->Memory.get_desc().get_size() > 0)
      Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
    K.setState(std::move(Saved));
  }
  K.addStep(dnnl::lrn_forward(PD), Args, PD.scratchpad_desc());
}

void buildLrn(fnn_kernel &K, const fnn_lrn_desc &D) {
  buildLrnForward(K, D, dnnl::prop_kind::forward_inference);
}

void buildLrnTraining(fnn_kernel &K, const fnn_lrn_desc &D) {
  buildLrnForward(K, D, dnnl::prop_kind::forward_training);
}

void buildLrnBackward(fnn_kernel &K, const fnn_lrn_desc &D,
                      const fnn_kernel *Forward) {
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  dnnl::lrn_forward::primitive_desc Hint(
      lrnDesc(D, dnnl::prop_kind::forward_training), Attr, Engine);
  memory::desc DataDesc = activationDesc(D.input, D.layout);
  dnnl::lrn_backward::primitive_desc PD(
      dnnl::lrn_backward::desc(dnnl::algorithm::lrn_across_channels, DataDesc,
                               DataDesc, D.size, static_cast<float>(D.alpha),
                               static_cast<float>(D.beta),
                               static_cast<float>(D.bias)),
      Attr, Engine, Hint);
  const LrnWorkspace *Saved =
      Forward ? Forward->findState<LrnWorkspace>() : nullptr;
  if (!Saved)
    throw KernelError("LRN's backward needs the kernel of its forward, made "
                      "by fnn_lrn_train_create");
  if (&Forward->device() != &K.device())
    throw KernelError("the forward kernel belongs to another device");
  // The backward may be an implementation that recomputes (oneDNN's
  // reference one, which has no workspace) where the forward saved one.
  memory::desc WorkspaceDesc = PD.workspace_desc();
  if (WorkspaceDesc.get_size() > 0 && Saved->Memory.get_desc() != WorkspaceDesc)
    throw KernelError("the forward kernel was made from a different "
                      "descriptor");
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  K.addOperand(DataDesc);
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.operand(LrnBwSrcSlot)},
      {DNNL_ARG_DIFF_DST, K.operand(LrnBwDiffDstSlot)},
      {DNNL_ARG_DIFF_SRC, K.operand(LrnBwDiffSrcSlot)}};
  if (WorkspaceDesc.get_size() > 0)
    Args.push_back({DNNL_ARG_WORKSPACE, Saved->Memory});
  K.setState(std::make_unique<LrnWorkspace>(*Saved));
  K.addStep(dnnl::lrn_backward(PD), Args, PD.scratchpad_desc());
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

extern "C" fnn_kernel *fnn_lrn_train_create(fnn_device *Device,
                                            const fnn_lrn_desc *Desc) {
  return createKernel("fnn_lrn_train_create", Device, Desc, buildLrnTraining,
                      describeLrn);
}

extern "C" fnn_kernel *fnn_lrn_backward_create(fnn_device *Device,
                                               const fnn_lrn_desc *Desc,
                                               fnn_kernel *Forward) {
  return createKernel(
      "fnn_lrn_backward_create", Device, Desc,
      [Forward](fnn_kernel &K, const fnn_lrn_desc &D) {
        buildLrnBackward(K, D, Forward);
      },
      describeLrn);
}

extern "C" void fnn_lrn_backward(fnn_kernel *Kernel, const void *Input,
                                 const void *GradOutput, void *GradInput) {
  Kernel->bind(LrnBwSrcSlot, Input);
  Kernel->bind(LrnBwDiffDstSlot, GradOutput);
  Kernel->bind(LrnBwDiffSrcSlot, GradInput);
  Kernel->run();
}
