//===- OpDescriptors.cpp - descriptor checks every backend makes ----------===//

#include "fastnn/runtime/OpDescriptors.h"

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/KernelBase.h"
#include "fastnn/runtime/ShapeText.h"

#include <algorithm>
#include <sstream>

using namespace fastnn::runtime;

namespace {

/// "sum", "mean", "max", "min" ("?" for a kind the ABI does not have).
const char *reduceKindName(int64_t Kind) {
  switch (Kind) {
  case FNN_REDUCE_SUM:
    return "sum";
  case FNN_REDUCE_MEAN:
    return "mean";
  case FNN_REDUCE_MAX:
    return "max";
  case FNN_REDUCE_MIN:
    return "min";
  default:
    return "?";
  }
}

/// Output extent of one spatial dimension of a convolution (the floor
/// formula).
int64_t convExtent(int64_t In, int64_t Kernel, int64_t Stride, int64_t Dilation,
                   int64_t PadBegin, int64_t PadEnd) {
  return (In + PadBegin + PadEnd - ((Kernel - 1) * Dilation + 1)) / Stride + 1;
}

} // namespace

std::string fastnn::runtime::describeReduce(const fnn_reduce_desc &D) {
  std::ostringstream S;
  S << "reduce " << reduceKindName(D.kind) << " input " << shapeText(D.input)
    << ", output " << shapeText(D.output);
  return S.str();
}

bool fastnn::runtime::checkReduceShapes(const fnn_reduce_desc &D) {
  checkF32(D.dtype);
  checkShape(D.input, "input", 1, FNN_MAX_RANK);
  checkShape(D.output, "output", 1, FNN_MAX_RANK);
  if (D.input.rank != D.output.rank)
    throw KernelError("output rank differs from the input's (reduced "
                      "dimensions stay as 1)");
  bool Reduces = false;
  for (int64_t I = 0; I < D.input.rank; ++I) {
    if (D.output.dims[I] != D.input.dims[I] && D.output.dims[I] != 1)
      throw KernelError("output dimension " + std::to_string(I) +
                        " is neither the input's nor 1");
    Reduces |= D.output.dims[I] != D.input.dims[I];
  }
  return Reduces;
}

std::string fastnn::runtime::describeSoftmax(const fnn_softmax_desc &D) {
  std::ostringstream S;
  S << (D.log ? "logsoftmax" : "softmax") << " input " << shapeText(D.input)
    << ", axis " << D.axis;
  return S.str();
}

int64_t fastnn::runtime::checkSoftmaxDesc(const fnn_softmax_desc &D) {
  checkF32(D.dtype);
  checkShape(D.input, "input", 1, FNN_MAX_RANK);
  int64_t Axis = D.axis < 0 ? D.axis + D.input.rank : D.axis;
  if (Axis < 0 || Axis >= D.input.rank)
    throw KernelError("axis is out of range");
  return Axis;
}

std::string fastnn::runtime::describeLrn(const fnn_lrn_desc &D) {
  std::ostringstream S;
  S << "lrn input " << shapeText(D.input) << " " << layoutName(D.layout)
    << ", size " << D.size << ", alpha " << D.alpha << ", beta " << D.beta
    << ", bias " << D.bias;
  return S.str();
}

void fastnn::runtime::checkLrnDesc(const fnn_lrn_desc &D) {
  checkF32(D.dtype);
  checkLayout(D.layout);
  checkShape(D.input, "input", 4, 4);
  // ONNX's window for an even size is one channel longer after than before;
  // oneDNN's is symmetric ((size - 1) / 2 each side), so only odd sizes
  // agree, on every backend. Image models use 3 or 5.
  if (D.size < 1 || D.size % 2 == 0)
    throw KernelError("size must be odd and positive");
}

void fastnn::runtime::checkPool2dDesc(const fnn_pool2d_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  checkShape(D.input, "input", 4, 4);
  checkShape(D.output, "output", 4, 4);
  if (D.kind != FNN_POOL_MAX && D.kind != FNN_POOL_AVG)
    throw KernelError("unknown pooling kind " + std::to_string(D.kind));
  int C = D.layout == FNN_NHWC ? 3 : 1;
  if (D.input.dims[0] != D.output.dims[0] ||
      D.input.dims[C] != D.output.dims[C])
    throw KernelError("output batch or channels differ from the input's");
  for (int J = 0; J < 2; ++J)
    if (D.kernel[J] < 1 || D.strides[J] < 1 || D.dilations[J] < 1 ||
        D.pads[J] < 0 || D.pads[J + 2] < 0)
      throw KernelError("kernel, strides and dilations must be >= 1, pads "
                        ">= 0");
}

std::string fastnn::runtime::describeMatmul(const fnn_matmul_desc &D) {
  std::ostringstream S;
  S << "matmul a " << shapeText(D.a) << (D.transpose_a ? " (transposed)" : "")
    << ", b " << shapeText(D.b) << (D.transpose_b ? " (transposed)" : "")
    << ", output " << shapeText(D.output) << (D.has_bias ? ", bias" : "")
    << postOpText(D.post_op);
  return S.str();
}

void fastnn::runtime::checkMatmulDesc(const fnn_matmul_desc &D) {
  checkFloatType(D.dtype);
  checkReluPostOp(D.post_op, "matmul");
  checkShape(D.a, "a", 2, FNN_MAX_RANK);
  checkShape(D.b, "b", 2, FNN_MAX_RANK);
  checkShape(D.output, "output", 2, FNN_MAX_RANK);
  if (D.a.rank > D.output.rank || D.b.rank > D.output.rank)
    throw KernelError("a and b may not have a higher rank than the output");
}

Conv2dFilter fastnn::runtime::conv2dFilter(const fnn_conv2d_desc &D) {
  bool Nhwc = D.layout == FNN_NHWC;
  return {D.filter.dims[0], D.filter.dims[Nhwc ? 3 : 1],
          D.filter.dims[Nhwc ? 1 : 2], D.filter.dims[Nhwc ? 2 : 3]};
}

void fastnn::runtime::checkConv2dOperands(const fnn_conv2d_desc &D) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  checkPostOp(D.post_op);
  checkShape(D.input, "input", 4, 4);
  checkShape(D.filter, "filter", 4, 4);
  checkShape(D.output, "output", 4, 4);
}

void fastnn::runtime::checkConv2dGeometry(const fnn_conv2d_desc &D) {
  bool Nhwc = D.layout == FNN_NHWC;
  int C = Nhwc ? 3 : 1, H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;
  const Conv2dFilter F = conv2dFilter(D);
  int64_t O = F.Out, I = F.In, KH = F.Height, KW = F.Width;
  int64_t Channels = D.input.dims[C], G = D.groups;
  if (G < 1 || Channels % G != 0 || O % G != 0 || I * G != Channels)
    throw KernelError("filter input channels times groups must equal the "
                      "input channels, and groups must divide both channel "
                      "counts");
  if (D.output.dims[0] != D.input.dims[0] || D.output.dims[C] != O)
    throw KernelError("output batch or channels do not match input/filter");
  for (int J = 0; J < 2; ++J)
    if (D.strides[J] < 1 || D.dilations[J] < 1 || D.pads[J] < 0 ||
        D.pads[J + 2] < 0)
      throw KernelError("strides and dilations must be >= 1, pads >= 0");
  if (convExtent(D.input.dims[H], KH, D.strides[0], D.dilations[0], D.pads[0],
                 D.pads[2]) != D.output.dims[H] ||
      convExtent(D.input.dims[W], KW, D.strides[1], D.dilations[1], D.pads[1],
                 D.pads[3]) != D.output.dims[W])
    throw KernelError("output height/width do not follow from input, filter, "
                      "strides, pads and dilations");
}

std::string fastnn::runtime::describeConv2d(const fnn_conv2d_desc &D,
                                            const char *Mode) {
  std::ostringstream S;
  S << "conv2d" << Mode << " input " << shapeText(D.input) << " "
    << layoutName(D.layout) << ", filter " << shapeText(D.filter) << ", output "
    << shapeText(D.output) << ", groups " << D.groups << ", strides "
    << formatPair(D.strides) << ", pads " << D.pads[0] << "," << D.pads[1]
    << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations) << (D.has_bias ? ", bias" : "")
    << postOpText(D.post_op);
  return S.str();
}

void fastnn::runtime::checkConv2dChain(const fnn_conv2d_chain_desc &D) {
  if (D.count != 2 && D.count != 3)
    throw KernelError("a chain has 2 or 3 convolutions, not " +
                      std::to_string(D.count));
  for (int64_t I = 0; I < D.count; ++I) {
    const fnn_conv2d_desc &Conv = D.convs[I];
    checkConv2dOperands(Conv);
    checkConv2dGeometry(Conv);
    if (I + 1 < D.count && (Conv.post_op & FNN_POST_ACCUMULATE))
      throw KernelError("only the last convolution of a chain may accumulate");
    if (I == 0)
      continue;
    const fnn_conv2d_desc &Previous = D.convs[I - 1];
    if (Previous.dtype != Conv.dtype || Previous.layout != Conv.layout)
      throw KernelError("the convolutions differ in dtype or layout");
    if (Previous.output.rank != Conv.input.rank ||
        !std::equal(Previous.output.dims,
                    Previous.output.dims + Previous.output.rank,
                    Conv.input.dims))
      throw KernelError("convolution " + std::to_string(I - 1) +
                        "'s output is not convolution " + std::to_string(I) +
                        "'s input");
  }
  const Conv2dFilter F = conv2dFilter(D.convs[1]);
  if (D.convs[1].groups != F.Out || F.In != 1)
    throw KernelError("the second convolution is not depthwise (one filter "
                      "per channel)");
}

std::string
fastnn::runtime::describeConv2dChain(const fnn_conv2d_chain_desc &D) {
  std::string Text = "chain of " + std::to_string(D.count) + ": ";
  for (int64_t I = 0; I < std::clamp<int64_t>(D.count, 0, 3); ++I)
    Text += (I ? ", then " : "") + describeConv2d(D.convs[I], "");
  return Text;
}
