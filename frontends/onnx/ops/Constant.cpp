//===- Constant.cpp - ONNX Constant ---------------------------------------===//
//
// Constant: a tensor or scalar value attribute as a fastnn.constant.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

LogicalResult importConstant(NodeImporter &n) {
  Builder &b = n.builder();
  DenseElementsAttr value;
  if (const onnx::TensorProto *tensor = n.tensorAttr("value")) {
    Type elementType = convertElementType(tensor->data_type(), n.context());
    if (!elementType)
      return n.error("unsupported element type of attribute 'value'");
    // External data belongs to initializers, which are read relative to
    // the model's directory; a constant's would be read relative to the
    // working directory.
    if (tensor->data_location() == onnx::TensorProto::EXTERNAL)
      return n.error("attribute 'value' stores its data externally; only "
                     "initializers may");
    RankedTensorType type;
    std::vector<char> data;
    if (std::string error = tensorTypeOf(*tensor, elementType, type);
        !error.empty())
      return n.error(error);
    if (std::string error = readTensorData(*tensor, "", type, data);
        !error.empty())
      return n.error(error);
    value = makeDenseAttr(type, data);
  } else if (n.hasAttr("value_float")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({}, b.getF32Type()),
        static_cast<float>(n.floatAttr("value_float", 0)));
  } else if (auto floats = n.floatsAttr("value_floats")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(floats->size())},
                              b.getF32Type()),
        ArrayRef<float>(*floats));
  } else if (n.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   n.intAttr("value_int", 0));
  } else if (auto ints = n.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(ints->size())},
                              b.getI64Type()),
        ArrayRef<int64_t>(*ints));
  } else {
    return n.error("expects a tensor, float(s) or int(s) value (sparse and "
                   "string constants are not supported)");
  }
  n.setOutput(0, ConstantOp::create(n.builder(), n.getLoc(), value));
  return success();
}

} // namespace

std::vector<OpRecord> constantOpRecords() {
  return {
      {"Constant", importConstant, {13, 19, 21, 23, 24, 25}},
  };
}

} // namespace fastnn::onnx_import
