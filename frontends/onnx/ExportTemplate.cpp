//===- ExportTemplate.cpp - the ONNX model train.bin exports --------------===//
//
// train.bin --export-onnx writes the graph it was compiled from with the
// trained values. The graph travels inside train.bin without the values the
// arena holds anyway (a ResNet's 100 MB would otherwise be embedded twice),
// and without references to external files it could not follow.
//
//===----------------------------------------------------------------------===//

#include "ModelImport.h"

using namespace mlir;

namespace fastnn::onnx_import {

std::string makeExportTemplate(MLIRContext &context, onnx::ModelProto model,
                               const llvm::StringSet<> &parameters,
                               llvm::StringRef modelDir, std::string &out) {
  for (onnx::TensorProto &tensor :
       *model.mutable_graph()->mutable_initializer()) {
    bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
    if (!parameters.contains(tensor.name()) && !external)
      continue;
    std::vector<char> data;
    if (!parameters.contains(tensor.name())) {
      Type elementType = convertElementType(tensor.data_type(), &context);
      if (!elementType)
        return "initializer '" + tensor.name() +
               "' has an element type fastnn cannot export";
      RankedTensorType type;
      if (std::string error = tensorTypeOf(tensor, elementType, type);
          !error.empty())
        return error;
      if (std::string error = readTensorData(tensor, modelDir, type, data);
          !error.empty())
        return error;
    }
    onnx::TensorProto stripped;
    stripped.set_name(tensor.name());
    stripped.set_data_type(tensor.data_type());
    *stripped.mutable_dims() = tensor.dims();
    if (!data.empty())
      stripped.set_raw_data(data.data(), data.size());
    tensor = std::move(stripped);
  }
  if (!model.SerializeToString(&out))
    return "cannot serialize the model for export";
  return "";
}

} // namespace fastnn::onnx_import
