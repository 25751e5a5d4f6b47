//===- ConvolutionBackward.cpp - fnn_conv2d_backward on oneDNN ------------===//
//
// Two primitives: convolution_backward_data (grad_input) and
// convolution_backward_weights (grad_filter and grad_bias), both made from a
// forward_training primitive descriptor as oneDNN requires, with reorders
// between the operands' plain layouts and the blocked ones they run on.
//
// A 1x1 convolution's bfloat16 weight gradient on AMX is a oneDNN matmul
// instead: oneDNN 2.6 computes it with its generic AMX convolution at
// 300-950 GFLOP/s on ResNet-50's 1x1 shapes (2 cores), its brgemm matmul
// the same product at 1500-2300. Elsewhere the two measure the same, and
// the convolution stays; its input gradient is then a matmul too.
// Convolutions with few output pixels and many taps
// times channels take the same matmul over im2col's columns (see
// im2colPays).
//
// fnn_kernel runs all of its steps on every call, so a gradient the caller
// does not want (NULL) is written into a kernel-owned spare buffer instead of
// being skipped; the spares are operands bound once at create time, which is
// how the call finds them again.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "Parallel.h"

#include <cstring>
#include <optional>
#include <sstream>

using namespace fastnn::cpu;
using dnnl::memory;

namespace {
/// im2colPays' limits: output pixels per image, and bytes of columns.
constexpr int64_t kIm2colMaxPixels = 17 * 17;
constexpr int64_t kIm2colMaxBytes = int64_t(16) << 20;

/// How many of the kernel's steps compute the weight and bias gradients;
/// the input gradient's steps follow them.
struct WeightSteps : fastnn::cpu::KernelState {
  WeightSteps(size_t Count, bool ByMatmul, bool DataByMatmul)
      : Count(Count), ByMatmul(ByMatmul), DataByMatmul(DataByMatmul) {}
  size_t Count;
  /// The weight gradient is weightsMatmul's product, whose operands are the
  /// Matmul* slots.
  bool ByMatmul;
  /// The input gradient is dataMatmul's product, whose operands are the
  /// Data*Matrix slots.
  bool DataByMatmul;
};

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
  SpareDiffBiasSlot,
  /// Views of the input (of a 1x1 convolution; no step reads it for im2col),
  /// grad_output and grad_filter as matrices, added only for the matmul
  /// weight gradient.
  MatmulSrcSlot,
  MatmulDiffDstSlot,
  MatmulDiffWeightsSlot,
  /// grad_output, the filter and grad_input as matrices, added only for
  /// the matmul input gradient (which comes with the matmul weight
  /// gradient).
  DataDiffDstMatrixSlot,
  DataWeightsMatrixSlot,
  DataDiffSrcMatrixSlot
};

/// The matrices of an NHWC convolution's weight gradient as one product,
/// dW[O][(kh, kw, I)] = sum over the output pixels p of dY[p][O] x
/// Columns[p][(kh, kw, I)]: grad_output transposed, the columns (the input
/// pixels each output pixel's taps read; for a 1x1, unstrided, unpadded
/// convolution the input itself) and grad_filter, all row-major as NHWC and
/// OHWI lay them out.
struct WeightsMatrices {
  memory::desc DiffDst, Columns, DiffWeights;
};

WeightsMatrices weightsMatrices(const fnn_conv2d_desc &D,
                                const fastnn::runtime::Conv2dFilter &F,
                                memory::data_type Type,
                                memory::data_type GradWeightsType) {
  int64_t Pixels = D.output.dims[0] * D.output.dims[1] * D.output.dims[2];
  int64_t Columns = F.Height * F.Width * F.In, Out = F.Out;
  return {
      memory::desc({Out, Pixels}, Type, memory::dims{1, Out}),
      memory::desc({Pixels, Columns}, Type, memory::dims{Columns, 1}),
      memory::desc({Out, Columns}, GradWeightsType, memory::dims{Columns, 1})};
}

/// How the weight gradient is computed.
enum class WeightsBy {
  Convolution,
  /// The product of grad_output and the input (a 1x1 convolution).
  Matmul,
  /// The product of grad_output and the columns im2col writes.
  Im2colMatmul
};

bool isPointwise(const fnn_conv2d_desc &D,
                 const fastnn::runtime::Conv2dFilter &F) {
  return F.Height == 1 && F.Width == 1 && D.strides[0] == 1 &&
         D.strides[1] == 1 && D.pads[0] == 0 && D.pads[1] == 0 &&
         D.pads[2] == 0 && D.pads[3] == 0;
}

/// Whether a convolution's bfloat16 weight gradient on AMX is faster as
/// im2col and a matmul than as oneDNN 2.6's AMX convolution: where the
/// output has few pixels and the filter many taps times channels, which
/// that convolution parallelises poorly (ResNet-50's 512-channel 3x3 at 7x7:
/// 3.4 ms against 1.0), and the columns stay small enough to cost less to
/// write than they save.
bool im2colPays(const fnn_conv2d_desc &D,
                const fastnn::runtime::Conv2dFilter &F) {
  int64_t Pixels = D.output.dims[1] * D.output.dims[2];
  int64_t Columns = F.Height * F.Width * F.In;
  int64_t Bytes = D.output.dims[0] * Pixels * Columns * 2;
  return Pixels <= kIm2colMaxPixels && Bytes <= kIm2colMaxBytes;
}

/// The matmul for the weight gradient and how it gets its right-hand
/// operand, where the header comment says it is faster than the
/// convolution.
std::optional<std::pair<dnnl::matmul::primitive_desc, WeightsBy>>
weightsMatmul(const fnn_conv2d_desc &D, const fastnn::runtime::Conv2dFilter &F,
              memory::data_type Compute, const dnnl::engine &Engine) {
  if (D.layout != FNN_NHWC || D.groups != 1 || D.has_bias ||
      Compute != memory::data_type::bf16)
    return std::nullopt;
  WeightsBy By = isPointwise(D, F)  ? WeightsBy::Matmul
                 : im2colPays(D, F) ? WeightsBy::Im2colMatmul
                                    : WeightsBy::Convolution;
  if (By == WeightsBy::Convolution)
    return std::nullopt;
  // The matmul sums over all pixels in float32 and rounds once into its
  // bfloat16 output, as build() requires of weight gradients.
  WeightsMatrices M = weightsMatrices(D, F, Compute, Compute);
  try {
    dnnl::matmul::primitive_desc Matmul(
        dnnl::matmul::desc(M.DiffDst, M.Columns, M.DiffWeights), Engine);
    if (std::string(Matmul.impl_info_str()).find("amx") != std::string::npos)
      return std::pair{Matmul, By};
  } catch (const dnnl::error &) {
  }
  return std::nullopt;
}

/// The matrices of a 1x1, unstrided, unpadded NHWC convolution's input
/// gradient dX[p][I] = sum over O of dY[p][O] x W[O][I]: grad_output, the
/// filter and grad_input, row-major as NHWC and OHWI lay them out.
struct DataMatrices {
  memory::desc DiffDst, Weights, DiffSrc;
};

DataMatrices dataMatrices(const fnn_conv2d_desc &D,
                          const fastnn::runtime::Conv2dFilter &F,
                          memory::data_type Type) {
  int64_t Pixels = D.output.dims[0] * D.output.dims[1] * D.output.dims[2];
  return {memory::desc({Pixels, F.Out}, Type, memory::dims{F.Out, 1}),
          memory::desc({F.Out, F.In}, Type, memory::dims{F.In, 1}),
          memory::desc({Pixels, F.In}, Type, memory::dims{F.In, 1})};
}

/// The matmul for the input gradient of a convolution whose weight
/// gradient is a matmul over the input itself (a 1x1 one), where oneDNN
/// gives an AMX implementation of it: 10-45% faster than oneDNN 2.6's AMX
/// backward-data convolution on ResNet-50's and Inception v3's 1x1 shapes
/// (2 cores, the convolution's filter reorder included), and it reads the
/// filter as it lies.
std::optional<dnnl::matmul::primitive_desc>
dataMatmul(const fnn_conv2d_desc &D, const fastnn::runtime::Conv2dFilter &F,
           memory::data_type Compute, const dnnl::engine &Engine) {
  DataMatrices M = dataMatrices(D, F, Compute);
  try {
    dnnl::matmul::primitive_desc Matmul(
        dnnl::matmul::desc(M.DiffDst, M.Weights, M.DiffSrc), Engine);
    if (std::string(Matmul.impl_info_str()).find("amx") != std::string::npos)
      return Matmul;
  } catch (const dnnl::error &) {
  }
  return std::nullopt;
}

/// Writes \p D's columns (see WeightsMatrices) for bfloat16 NHWC \p Src:
/// row p, output pixel (n, oy, ox), holds for each tap (kh, kw) the input
/// pixel it reads, zero where it reads padding.
void im2col(const fnn_conv2d_desc &D, const fastnn::runtime::Conv2dFilter &F,
            const uint16_t *Src, uint16_t *Columns) {
  const int64_t H = D.input.dims[1], W = D.input.dims[2], C = F.In;
  const int64_t OH = D.output.dims[1], OW = D.output.dims[2];
  const int64_t Row = F.Height * F.Width * C;
  const int64_t Rows = D.output.dims[0] * OH;
  parallelFor(Rows, threadsForWork(Rows * OW * Row),
              [&](int64_t Begin, int64_t End, int) {
                for (int64_t R = Begin; R < End; ++R) {
                  int64_t N = R / OH, Oy = R % OH;
                  uint16_t *Out = Columns + R * OW * Row;
                  for (int64_t Ox = 0; Ox < OW; ++Ox)
                    for (int64_t Kh = 0; Kh < F.Height; ++Kh) {
                      int64_t Iy =
                          Oy * D.strides[0] - D.pads[0] + Kh * D.dilations[0];
                      for (int64_t Kw = 0; Kw < F.Width; ++Kw, Out += C) {
                        int64_t Ix =
                            Ox * D.strides[1] - D.pads[1] + Kw * D.dilations[1];
                        if (Iy < 0 || Iy >= H || Ix < 0 || Ix >= W)
                          std::memset(Out, 0, C * sizeof(uint16_t));
                        else
                          std::memcpy(Out, Src + ((N * H + Iy) * W + Ix) * C,
                                      C * sizeof(uint16_t));
                      }
                    }
                }
              });
}

std::string describe(const fnn_conv2d_desc &D) {
  std::ostringstream S;
  S << "conv2d backward input " << shapeText(D.input) << " "
    << layoutName(D.layout) << ", filter " << shapeText(D.filter) << ", output "
    << shapeText(D.output) << ", groups " << D.groups << ", strides "
    << formatPair(D.strides) << ", pads " << D.pads[0] << "," << D.pads[1]
    << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations) << (D.has_bias ? ", bias" : "");
  return S.str();
}

void build(CpuKernel &K, const fnn_conv2d_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  if (D.post_op != FNN_POST_NONE)
    throw KernelError("post_op must be FNN_POST_NONE (the compiler applies "
                      "the relu gradient itself)");
  checkShape(D.input, "input", 4, 4);
  checkShape(D.filter, "filter", 4, 4);
  checkShape(D.output, "output", 4, 4);
  bool Nhwc = D.layout == FNN_NHWC;
  const fastnn::runtime::Conv2dFilter F = fastnn::runtime::conv2dFilter(D);
  int64_t O = F.Out, I = F.In, KH = F.Height, KW = F.Width;
  int64_t C = D.input.dims[Nhwc ? 3 : 1], G = D.groups;
  if (G < 1 || O % G != 0 || I * G != C)
    throw KernelError("filter input channels times groups must equal the "
                      "input channels, and groups must divide the output "
                      "channels");
  for (int J = 0; J < 2; ++J)
    if (D.strides[J] < 1 || D.dilations[J] < 1 || D.pads[J] < 0 ||
        D.pads[J + 2] < 0)
      throw KernelError("strides and dilations must be >= 1, pads >= 0");

  const memory::data_type Storage = storageType(D.dtype);
  const memory::data_type Compute = computeType(D.dtype);
  memory::desc SrcDesc = activationDesc(D.input, D.layout, Storage);
  memory::desc DstDesc = activationDesc(D.output, D.layout, Storage);
  // Grouped OIHW/OHWI is oneDNN's (G, O/G, I, H, W): same bytes.
  memory::dims WeightsDims =
      G == 1 ? memory::dims{O, I, KH, KW} : memory::dims{G, O / G, I, KH, KW};
  memory::desc WeightsDesc(
      WeightsDims, Storage,
      G == 1 ? (Nhwc ? memory::format_tag::ohwi : memory::format_tag::oihw)
             : (Nhwc ? memory::format_tag::gohwi : memory::format_tag::goihw));
  memory::desc BiasDesc({O}, Storage, memory::format_tag::a);
  memory::dims Strides = {D.strides[0], D.strides[1]};
  // oneDNN counts dilation from 0.
  memory::dims Dilations = {D.dilations[0] - 1, D.dilations[1] - 1};
  memory::dims PadL = {D.pads[0], D.pads[1]};
  memory::dims PadR = {D.pads[2], D.pads[3]};
  const dnnl::engine &Engine = K.device().Engine;
  dnnl::primitive_attr Attr = makeAttr(FNN_POST_NONE);
  // Weight and bias gradients are sums over the whole batch: computed in
  // float32 whatever the activations' type (bfloat16 convolutions
  // accumulate in float32 anyway) and rounded once into the operand.
  const memory::data_type GradWeightsType =
      Compute == memory::data_type::bf16 ? memory::data_type::f32 : Compute;

  // As in the forward kernel: Winograd where winogradPays (for each pass
  // apart: one may pay where the other does not), on nChw16c (NHWC
  // operands reordered around it), else direct; plain NCHW activations are
  // given to the jit convolutions as nChw16c (on plain NCHW oneDNN 2.6 has
  // only its gemm convolutions, about half as fast here), weights in
  // oneDNN's choice.
  auto Blocked = [&](const memory::desc &Plain) {
    return memory::desc(Plain.dims(), Compute, memory::format_tag::nChw16c);
  };
  auto Any = [](const memory::dims &Dims, memory::data_type Type) {
    return memory::desc(Dims, Type, memory::format_tag::any);
  };
  // The forward primitive each backward one is created against (oneDNN's
  // hint), with the same algorithm and layouts.
  auto Forward = [&](const memory::desc &Src, const memory::desc &Dst,
                     dnnl::algorithm Algorithm) {
    memory::desc Weights = Any(WeightsDims, Compute);
    auto ForwardDesc =
        D.has_bias
            ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                              Algorithm, Src, Weights,
                                              withType(BiasDesc, Compute), Dst,
                                              Strides, Dilations, PadL, PadR)
            : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                              Algorithm, Src, Weights, Dst,
                                              Strides, Dilations, PadL, PadR);
    return dnnl::convolution_forward::primitive_desc(ForwardDesc, Attr, Engine);
  };
  auto CreateData = [&](const memory::desc &Src, const memory::desc &Dst,
                        dnnl::algorithm Algorithm) {
    return dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(Algorithm, Src,
                                              Any(WeightsDims, Compute), Dst,
                                              Strides, Dilations, PadL, PadR),
        Attr, Engine, Forward(Src, Dst, Algorithm));
  };
  auto CreateWeights = [&](const memory::desc &Src, const memory::desc &Dst,
                           dnnl::algorithm Algorithm) {
    memory::desc GradWeights = Any(WeightsDims, GradWeightsType);
    memory::desc GradBias = withType(BiasDesc, GradWeightsType);
    auto WeightsBackwardDesc = D.has_bias
                                   ? dnnl::convolution_backward_weights::desc(
                                         Algorithm, Src, GradWeights, GradBias,
                                         Dst, Strides, Dilations, PadL, PadR)
                                   : dnnl::convolution_backward_weights::desc(
                                         Algorithm, Src, GradWeights, Dst,
                                         Strides, Dilations, PadL, PadR);
    return dnnl::convolution_backward_weights::primitive_desc(
        WeightsBackwardDesc, Attr, Engine, Forward(Src, Dst, Algorithm));
  };
  memory::desc ConvSrc = withType(SrcDesc, Compute),
               ConvDst = withType(DstDesc, Compute);
  if (!Nhwc) {
    ConvSrc = G == 1 && C < 16 ? ConvSrc : Blocked(SrcDesc);
    ConvDst = Blocked(DstDesc);
  }
  const dnnl::convolution_backward_data::primitive_desc DataPD =
      chooseConvPrimitive(D, ConvPass::BackwardData, ConvSrc, ConvDst,
                          CreateData);
  const dnnl::convolution_backward_weights::primitive_desc WeightsPD =
      chooseConvPrimitive(D, ConvPass::BackwardWeights, ConvSrc, ConvDst,
                          CreateWeights);

  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(DstDesc);
  K.addOperand(SrcDesc);
  K.addOperand(WeightsDesc);
  K.addOperand(BiasDesc);
  K.addSpareOperand(SrcDesc);
  K.addSpareOperand(WeightsDesc);
  K.addSpareOperand(BiasDesc);
  // The weight gradients first: a caller that passes no grad_input (the
  // first convolution, whose input is the images) runs only these steps.
  auto Matmul = weightsMatmul(D, F, Compute, Engine);
  memory DiffDst;
  if (Matmul) {
    const dnnl::matmul::primitive_desc &PD = Matmul->first;
    WeightsMatrices M = weightsMatrices(D, F, Storage, Storage);
    K.addOperand(M.Columns);
    K.addOperand(M.DiffDst);
    K.addOperand(M.DiffWeights);
    memory Columns;
    if (Matmul->second == WeightsBy::Im2colMatmul) {
      Columns = K.addTransient(PD.weights_desc());
      K.addHostStep({K.operand(SrcSlot), Columns},
                    [D, F](void *const *Handles) {
                      im2col(D, F, static_cast<const uint16_t *>(Handles[0]),
                             static_cast<uint16_t *>(Handles[1]));
                    });
    } else {
      Columns = K.inputIn(MatmulSrcSlot, PD.weights_desc());
    }
    memory DiffDstMatrix = K.inputIn(MatmulDiffDstSlot, PD.src_desc());
    memory DiffWeights = K.outputIn(MatmulDiffWeightsSlot, PD.dst_desc());
    K.addStep(dnnl::matmul(PD),
              {{DNNL_ARG_SRC, DiffDstMatrix},
               {DNNL_ARG_WEIGHTS, Columns},
               {DNNL_ARG_DST, DiffWeights}},
              PD.scratchpad_desc());
    K.finishOutput(MatmulDiffWeightsSlot, DiffWeights);
  } else {
    memory Src = K.inputIn(SrcSlot, WeightsPD.src_desc());
    DiffDst = K.inputIn(DiffDstSlot, WeightsPD.diff_dst_desc());
    memory DiffWeights =
        K.outputIn(DiffWeightsSlot, WeightsPD.diff_weights_desc());
    std::vector<std::pair<int, memory>> Args = {
        {DNNL_ARG_SRC, Src},
        {DNNL_ARG_DIFF_DST, DiffDst},
        {DNNL_ARG_DIFF_WEIGHTS, DiffWeights}};
    memory DiffBias;
    if (D.has_bias) {
      DiffBias = K.outputIn(DiffBiasSlot, WeightsPD.diff_bias_desc());
      Args.push_back({DNNL_ARG_DIFF_BIAS, DiffBias});
    }
    K.addStep(dnnl::convolution_backward_weights(WeightsPD), Args,
              WeightsPD.scratchpad_desc());
    K.finishOutput(DiffWeightsSlot, DiffWeights);
    if (D.has_bias)
      K.finishOutput(DiffBiasSlot, DiffBias);
  }
  std::optional<dnnl::matmul::primitive_desc> DataMatmul;
  if (Matmul && Matmul->second == WeightsBy::Matmul)
    DataMatmul = dataMatmul(D, F, Compute, Engine);
  K.setState(std::make_unique<WeightSteps>(K.stepCount(), Matmul.has_value(),
                                           DataMatmul.has_value()));
  if (DataMatmul) {
    DataMatrices M = dataMatrices(D, F, Storage);
    K.addOperand(M.DiffDst);
    K.addOperand(M.Weights);
    K.addOperand(M.DiffSrc);
    memory DiffDstMatrix =
        K.inputIn(DataDiffDstMatrixSlot, DataMatmul->src_desc());
    memory WeightsMatrix =
        K.inputIn(DataWeightsMatrixSlot, DataMatmul->weights_desc());
    memory DiffSrcMatrix =
        K.outputIn(DataDiffSrcMatrixSlot, DataMatmul->dst_desc());
    K.addStep(dnnl::matmul(*DataMatmul),
              {{DNNL_ARG_SRC, DiffDstMatrix},
               {DNNL_ARG_WEIGHTS, WeightsMatrix},
               {DNNL_ARG_DST, DiffSrcMatrix}},
              DataMatmul->scratchpad_desc());
    K.finishOutput(DataDiffSrcMatrixSlot, DiffSrcMatrix);
    return;
  }

  // Both primitives usually want the same grad_output layout: one reorder.
  memory DataDiffDst = DiffDst && DataPD.diff_dst_desc() == DiffDst.get_desc()
                           ? DiffDst
                           : K.inputIn(DiffDstSlot, DataPD.diff_dst_desc());
  memory Weights = K.inputIn(WeightsSlot, DataPD.weights_desc());
  memory DiffSrc = K.outputIn(DiffSrcSlot, DataPD.diff_src_desc());
  K.addStep(dnnl::convolution_backward_data(DataPD),
            {{DNNL_ARG_DIFF_DST, DataDiffDst},
             {DNNL_ARG_WEIGHTS, Weights},
             {DNNL_ARG_DIFF_SRC, DiffSrc}},
            DataPD.scratchpad_desc());
  K.finishOutput(DiffSrcSlot, DiffSrc);
}

} // namespace

extern "C" fnn_kernel *fnn_conv2d_backward_create(fnn_device *Device,
                                                  const fnn_conv2d_desc *Desc) {
  return createKernel("fnn_conv2d_backward_create", Device, Desc, build,
                      describe);
}

extern "C" void fnn_conv2d_backward(fnn_kernel *Handle, const void *Input,
                                    const void *Filter, const void *GradOutput,
                                    void *GradInput, void *GradFilter,
                                    void *GradBias) {
  CpuKernel *Kernel = CpuKernel::from(Handle);
  Kernel->bind(SrcSlot, Input);
  Kernel->bind(WeightsSlot, Filter);
  Kernel->bind(DiffDstSlot, GradOutput);
  Kernel->bind(DiffSrcSlot, Kernel->orSpare(GradInput, SpareDiffSrcSlot));
  void *DiffWeights = Kernel->orSpare(GradFilter, SpareDiffWeightsSlot);
  Kernel->bind(DiffWeightsSlot, DiffWeights);
  Kernel->bind(DiffBiasSlot, Kernel->orSpare(GradBias, SpareDiffBiasSlot));
  const WeightSteps &Steps = Kernel->state<WeightSteps>();
  if (Steps.ByMatmul) {
    Kernel->bind(MatmulSrcSlot, Input);
    Kernel->bind(MatmulDiffDstSlot, GradOutput);
    Kernel->bind(MatmulDiffWeightsSlot, DiffWeights);
  }
  if (Steps.DataByMatmul) {
    Kernel->bind(DataDiffDstMatrixSlot, GradOutput);
    Kernel->bind(DataWeightsMatrixSlot, Filter);
    Kernel->bind(DataDiffSrcMatrixSlot,
                 Kernel->orSpare(GradInput, SpareDiffSrcSlot));
  }
  if (GradInput)
    Kernel->run();
  else
    Kernel->run(Steps.Count);
}
