//===- Convolution.cpp - fnn_conv2d on oneDNN convolution_forward ---------===//

#include "Kernel.h"

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// Where one convolution's operands are among its kernel's operand slots.
struct ConvSlots {
  int Src, Weights, Bias, Dst;
};
/// fnn_conv2d_forward's operands, in the order build() adds them.
constexpr ConvSlots kConvSlots = {0, 1, 2, 3};
/// fnn_conv2d_chain_forward's operands, in the order buildChain() adds
/// them: the input, then each convolution's weights, bias and output; a
/// convolution after the first reads the previous one's output.
ConvSlots chainSlots(int I) {
  return {I == 0 ? 0 : 3 * I, 3 * I + 1, 3 * I + 2, 3 * I + 3};
}
/// How many convolutions a chain kernel binds operands for.
struct ChainState : KernelState {
  explicit ChainState(int64_t Count) : Count(Count) {}
  int64_t Count;
};

/// The plain operand layouts of a convolution (as the ABI passes them).
struct ConvOperands {
  dnnl::memory::desc Src, Weights, Bias, Dst;
};

ConvOperands convOperands(const fnn_conv2d_desc &D) {
  bool Nhwc = D.layout == FNN_NHWC;
  const fastnn::runtime::Conv2dFilter F = fastnn::runtime::conv2dFilter(D);
  const memory::data_type Storage = storageType(D.dtype);
  // Plain OIHW/OHWI viewed as oneDNN's (G, O/G, I, H, W) when grouped: the
  // group is the outer part of O, so the bytes are the same.
  memory::desc Weights =
      D.groups == 1
          ? memory::desc({F.Out, F.In, F.Height, F.Width}, Storage,
                         Nhwc ? memory::format_tag::ohwi
                              : memory::format_tag::oihw)
          : memory::desc(
                {D.groups, F.Out / D.groups, F.In, F.Height, F.Width}, Storage,
                Nhwc ? memory::format_tag::gohwi : memory::format_tag::goihw);
  return {activationDesc(D.input, D.layout, Storage), Weights,
          memory::desc({F.Out}, Storage, memory::format_tag::a),
          activationDesc(D.output, D.layout, Storage)};
}

void addOperands(CpuKernel &K, const ConvOperands &Operands) {
  K.addOperand(Operands.Src);
  K.addOperand(Operands.Weights);
  K.addOperand(Operands.Bias);
  K.addOperand(Operands.Dst);
}

/// Convolution \p D (operands \p Plain) for inference on activations
/// \p Src and \p Dst in the compute type, the weights in oneDNN's choice of
/// layout, with \p Algorithm: direct, or Winograd where winogradPays (not
/// auto, which decides by its own measurements of other machines).
dnnl::convolution_forward::desc
inferenceDesc(const fnn_conv2d_desc &D, const ConvOperands &Plain,
              const memory::desc &Src, const memory::desc &Dst,
              dnnl::algorithm Algorithm = dnnl::algorithm::convolution_direct) {
  const memory::data_type Compute = Src.data_type();
  memory::desc Weights(Plain.Weights.dims(), Compute, memory::format_tag::any);
  memory::dims Strides = {D.strides[0], D.strides[1]};
  // oneDNN counts dilation from 0 (a dense kernel has dilation 0).
  memory::dims Dilations = {D.dilations[0] - 1, D.dilations[1] - 1};
  memory::dims PadL = {D.pads[0], D.pads[1]}, PadR = {D.pads[2], D.pads[3]};
  // Winograd's forward_inference weights are a pre-transformed format no
  // reorder produces from OHWI; its forward_training ones are blocked.
  const auto Kind = Algorithm == dnnl::algorithm::convolution_winograd
                        ? dnnl::prop_kind::forward_training
                        : dnnl::prop_kind::forward_inference;
  return D.has_bias
             ? dnnl::convolution_forward::desc(
                   Kind, Algorithm, Src, Weights, withType(Plain.Bias, Compute),
                   Dst, Strides, Dilations, PadL, PadR)
             : dnnl::convolution_forward::desc(Kind, Algorithm, Src, Weights,
                                               Dst, Strides, Dilations, PadL,
                                               PadR);
}

/// Appends the step of convolution \p D as primitive \p PD reading \p Src,
/// with its weights, bias and output in slots \p S (and the reorders or
/// conversions they need).
void addConvStep(CpuKernel &K, const fnn_conv2d_desc &D,
                 const dnnl::convolution_forward::primitive_desc &PD,
                 const memory &Src, ConvSlots S) {
  memory Weights = D.constant_filter
                       ? K.constantInputIn(S.Weights, PD.weights_desc())
                       : K.inputIn(S.Weights, PD.weights_desc());
  // Accumulating, the primitive's sum post-op reads the output's contents.
  memory Dst = D.post_op & FNN_POST_ACCUMULATE
                   ? K.inputIn(S.Dst, PD.dst_desc())
                   : K.outputIn(S.Dst, PD.dst_desc());
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, Src}, {DNNL_ARG_WEIGHTS, Weights}, {DNNL_ARG_DST, Dst}};
  if (D.has_bias)
    Args.push_back({DNNL_ARG_BIAS, K.inputIn(S.Bias, PD.bias_desc())});
  K.addStep(dnnl::convolution_forward(PD), Args, PD.scratchpad_desc());
  K.finishOutput(S.Dst, Dst);
}

/// Appends the steps of convolution \p D, whose operands are slots \p S
/// of \p K (already added).
void addConvSteps(CpuKernel &K, const fnn_conv2d_desc &D, ConvSlots S) {
  bool Nhwc = D.layout == FNN_NHWC;
  int64_t C = D.input.dims[Nhwc ? 3 : 1], G = D.groups;
  const memory::data_type Compute = computeType(D.dtype);
  const ConvOperands Plain = convOperands(D);
  const memory::desc &SrcDesc = Plain.Src, &DstDesc = Plain.Dst;
  auto Create = [&](const memory::desc &Src, const memory::desc &Dst,
                    dnnl::algorithm Algorithm) {
    return dnnl::convolution_forward::primitive_desc(
        inferenceDesc(D, Plain, Src, Dst, Algorithm), makeAttr(D.post_op),
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
  auto Blocked = [&](const memory::desc &Operand) {
    return memory::desc(Operand.dims(), Compute, memory::format_tag::nChw16c);
  };
  memory::desc ConvSrc = withType(SrcDesc, Compute),
               ConvDst = withType(DstDesc, Compute);
  if (!Nhwc) {
    ConvSrc = G == 1 && C < 16 ? ConvSrc : Blocked(SrcDesc);
    ConvDst = Blocked(DstDesc);
  }
  // Winograd runs on nChw16c only, so NHWC operands are reordered around
  // it too; at the shapes where it pays that costs less than it saves.
  const dnnl::convolution_forward::primitive_desc PD =
      chooseConvPrimitive(D, ConvPass::Forward, ConvSrc, ConvDst, Create);

  addConvStep(K, D, PD, K.inputIn(S.Src, PD.src_desc()), S);
}

void build(CpuKernel &K, const fnn_conv2d_desc &D) {
  fastnn::runtime::checkConv2dOperands(D);
  fastnn::runtime::checkConv2dGeometry(D);
  addOperands(K, convOperands(D));
  addConvSteps(K, D, kConvSlots);
}

/// The chain's first two convolutions as one oneDNN primitive: the
/// pointwise convolution with the depthwise one as its depthwise post-op,
/// so that the intermediate never reaches memory (each thread keeps the few
/// rows the depthwise window reads in a buffer), and a third convolution
/// reading its output where it lies, in the scratch. oneDNN 2.6 has that
/// fusion as one jit kernel only on channel-blocked activations (nChw16c on
/// AVX-512, nChw8c on AVX2), and only where the intermediate exceeds twice
/// the cores' L2 caches; below that its ref_fused_convolution runs two
/// primitives in turn, and the convolutions' own steps do the same without
/// the reorders. Its NHWC variant is not asked for: on 2.6.3 it computes
/// wrong values and writes past its scratchpad (measured against the two
/// convolutions, with a guard page after the scratchpad). False, adding
/// nothing, when there is no such kernel (also for a depthwise window that
/// is not square, unequal strides or dilation, which the post-op cannot
/// describe, and for an accumulating depthwise convolution).
bool addFusedChainSteps(CpuKernel &K, const fnn_conv2d_chain_desc &D,
                        const std::vector<ConvOperands> &Plain) {
  const fnn_conv2d_desc &A = D.convs[0], &B = D.convs[1];
  const fastnn::runtime::Conv2dFilter F = fastnn::runtime::conv2dFilter(B);
  if (F.Height != F.Width || B.strides[0] != B.strides[1] ||
      B.pads[0] != B.pads[1] || B.dilations[0] != 1 || B.dilations[1] != 1 ||
      (B.post_op & FNN_POST_ACCUMULATE))
    return false;
  const memory::data_type Compute = computeType(A.dtype);
  dnnl::post_ops Ops;
  appendActivation(Ops, A.post_op);
  Ops.append_dw(Compute, B.has_bias ? Compute : memory::data_type::undef,
                Compute, F.Height, B.strides[0], B.pads[0], 0, {});
  appendActivation(Ops, B.post_op);
  dnnl::convolution_forward::primitive_desc PD, ThirdPD;
  for (memory::format_tag Blocked :
       {memory::format_tag::nChw16c, memory::format_tag::nChw8c}) {
    auto InBlocks = [&](const memory::desc &Operand) {
      return memory::desc(Operand.dims(), Compute, Blocked);
    };
    try {
      PD = dnnl::convolution_forward::primitive_desc(
          inferenceDesc(A, Plain[0], InBlocks(Plain[0].Src),
                        InBlocks(Plain[0].Dst)),
          makeAttr(Ops), K.device().Engine);
      if (D.count == 3)
        ThirdPD = dnnl::convolution_forward::primitive_desc(
            inferenceDesc(D.convs[2], Plain[2], PD.dst_desc(),
                          InBlocks(Plain[2].Dst)),
            makeAttr(D.convs[2].post_op), K.device().Engine);
    } catch (const dnnl::error &) {
      PD = ThirdPD = {};
      continue;
    }
    auto IsJit = [](const dnnl::convolution_forward::primitive_desc &P) {
      return !P || std::string(P.impl_info_str()).rfind("ref", 0) != 0;
    };
    if (IsJit(PD) && IsJit(ThirdPD) &&
        PD.dst_desc().dims() == Plain[1].Dst.dims())
      break;
    PD = ThirdPD = {};
  }
  if (!PD)
    return false;
  const int SecondWeightsArg = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS;
  const int SecondBiasArg = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS;
  const ConvSlots First = chainSlots(0), Second = chainSlots(1);
  auto WeightsIn = [&](int Slot, bool Constant, const memory::desc &Wanted) {
    return Constant ? K.constantInputIn(Slot, Wanted) : K.inputIn(Slot, Wanted);
  };
  std::vector<std::pair<int, memory>> Args = {
      {DNNL_ARG_SRC, K.inputIn(First.Src, PD.src_desc())},
      {DNNL_ARG_WEIGHTS,
       WeightsIn(First.Weights, A.constant_filter, PD.weights_desc())},
      {SecondWeightsArg,
       WeightsIn(Second.Weights, B.constant_filter,
                 PD.query_md(dnnl::query::exec_arg_md, SecondWeightsArg))}};
  if (A.has_bias)
    Args.push_back({DNNL_ARG_BIAS, K.inputIn(First.Bias, PD.bias_desc())});
  if (B.has_bias)
    Args.push_back({SecondBiasArg,
                    K.inputIn(Second.Bias, PD.query_md(dnnl::query::exec_arg_md,
                                                       SecondBiasArg))});
  // With a third convolution the depthwise output stays in the scratch,
  // blocked, where the third reads it.
  memory Dst = D.count == 3 ? K.addTransient(PD.dst_desc())
                            : K.outputIn(Second.Dst, PD.dst_desc());
  Args.push_back({DNNL_ARG_DST, Dst});
  K.addStep(dnnl::convolution_forward(PD), Args, PD.scratchpad_desc());
  if (D.count == 3)
    addConvStep(K, D.convs[2], ThirdPD, Dst, chainSlots(2));
  else
    K.finishOutput(Second.Dst, Dst);
  return true;
}

void buildChain(CpuKernel &K, const fnn_conv2d_chain_desc &D) {
  fastnn::runtime::checkConv2dChain(D);
  std::vector<ConvOperands> Plain;
  for (int64_t I = 0; I < D.count; ++I)
    Plain.push_back(convOperands(D.convs[I]));
  K.addOperand(Plain[0].Src);
  for (const ConvOperands &Conv : Plain) {
    K.addOperand(Conv.Weights);
    K.addOperand(Conv.Bias);
    K.addOperand(Conv.Dst);
  }
  K.setState(std::make_unique<ChainState>(D.count));
  if (addFusedChainSteps(K, D, Plain))
    return;
  for (int64_t I = 0; I < D.count; ++I)
    addConvSteps(K, D.convs[I], chainSlots(I));
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
  Kernel->bind(kConvSlots.Src, Input);
  Kernel->bind(kConvSlots.Weights, Filter);
  Kernel->bind(kConvSlots.Bias, Bias);
  Kernel->bind(kConvSlots.Dst, Output);
  Kernel->run();
}

extern "C" fnn_kernel *
fnn_conv2d_chain_create(fnn_device *Device, const fnn_conv2d_chain_desc *Desc) {
  return createKernel("fnn_conv2d_chain_create", Device, Desc, buildChain,
                      fastnn::runtime::describeConv2dChain);
}

extern "C" void fnn_conv2d_chain_forward(fnn_kernel *Handle, const void *Input,
                                         const void *Filter0, const void *Bias0,
                                         void *Output0, const void *Filter1,
                                         const void *Bias1, void *Output1,
                                         const void *Filter2, const void *Bias2,
                                         void *Output2) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  const void *Filters[] = {Filter0, Filter1, Filter2};
  const void *Biases[] = {Bias0, Bias1, Bias2};
  void *Outputs[] = {Output0, Output1, Output2};
  Kernel->bind(chainSlots(0).Src, Input);
  for (int I = 0; I < Kernel->state<ChainState>().Count; ++I) {
    Kernel->bind(chainSlots(I).Weights, Filters[I]);
    Kernel->bind(chainSlots(I).Bias, Biases[I]);
    Kernel->bind(chainSlots(I).Dst, Outputs[I]);
  }
  Kernel->run();
}
