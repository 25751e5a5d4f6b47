//===- OpDescriptors.h - descriptor checks every backend makes --*- C++ -*-===//
//
// What an op's descriptor means independently of the device: the checks a
// *_create makes before the kernel library sees the descriptor (their
// messages are the ABI's, the same on every backend), the arithmetic they
// rest on, and the descriptor's text in fnn_last_error.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_OPDESCRIPTORS_H
#define FASTNN_RUNTIME_OPDESCRIPTORS_H

#include "fastnn/runtime/abi.h"

#include <cstdint>
#include <string>

namespace fastnn::runtime {

std::string describeReduce(const fnn_reduce_desc &D);
/// Checks \p D's type and shapes (the output keeps the input's rank, each
/// dimension the input's or 1; not the kind) and returns whether any
/// dimension is reduced: a reduction over nothing is a copy.
bool checkReduceShapes(const fnn_reduce_desc &D);

std::string describeSoftmax(const fnn_softmax_desc &D);
/// Checks \p D's type, input and axis, and returns the axis counted from
/// the front (a negative one counts from the end, as in ONNX).
int64_t checkSoftmaxDesc(const fnn_softmax_desc &D);

std::string describeLrn(const fnn_lrn_desc &D);
/// Checks \p D's type, layout, input and size.
void checkLrnDesc(const fnn_lrn_desc &D);

/// Checks \p D's type, layout, shapes, kind and window parameters; not
/// whether the output's height and width follow from them.
void checkPool2dDesc(const fnn_pool2d_desc &D);

std::string describeMatmul(const fnn_matmul_desc &D);
/// Checks \p D's type, post-op, and operand ranks; not the dimensions.
void checkMatmulDesc(const fnn_matmul_desc &D);

/// A conv2d filter's dimensions: OIHW for NCHW, OHWI for NHWC.
struct Conv2dFilter {
  int64_t Out, In, Height, Width;
};
Conv2dFilter conv2dFilter(const fnn_conv2d_desc &D);
/// Checks \p D's type, layout, post-op and operand ranks.
void checkConv2dOperands(const fnn_conv2d_desc &D);
/// Checks \p D's groups, channels, strides, pads and dilations, and that the
/// output's height and width follow from them.
void checkConv2dGeometry(const fnn_conv2d_desc &D);
/// "conv2d<Mode> input ...", e.g. Mode " backward".
std::string describeConv2d(const fnn_conv2d_desc &D, const char *Mode);
/// Checks the count and the convolutions of \p D, and that they chain as
/// abi.h's fnn_conv2d_chain_desc says.
void checkConv2dChain(const fnn_conv2d_chain_desc &D);
std::string describeConv2dChain(const fnn_conv2d_chain_desc &D);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_OPDESCRIPTORS_H
