//===- OnnxExport.cpp - train.bin --export-onnx ---------------------------===//

#include "fastnn/trainer/OnnxExport.h"

#include "fastnn/trainer/AtomicFile.h"

#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <map>

namespace fastnn::trainer {

using runtime::shapeText;

namespace {

int32_t onnxDataType(int64_t Dtype) {
  switch (Dtype) {
  case FNN_F32:
    return onnx::TensorProto::FLOAT;
  case FNN_F16:
    return onnx::TensorProto::FLOAT16;
  case FNN_BF16:
    return onnx::TensorProto::BFLOAT16;
  case FNN_F64:
    return onnx::TensorProto::DOUBLE;
  default:
    return onnx::TensorProto::UNDEFINED;
  }
}

bool hasData(const onnx::TensorProto &Tensor) {
  return Tensor.has_raw_data() || Tensor.float_data_size() ||
         Tensor.int32_data_size() || Tensor.int64_data_size() ||
         Tensor.double_data_size() || Tensor.uint64_data_size() ||
         Tensor.string_data_size() ||
         Tensor.data_location() == onnx::TensorProto::EXTERNAL;
}

Status fill(onnx::TensorProto &Tensor, const StateTensor &Record) {
  std::vector<int64_t> Dims(Tensor.dims().begin(), Tensor.dims().end());
  if (Dims != Record.Shape || Tensor.data_type() != onnxDataType(Record.Dtype))
    return Status::error(
        "parameter '" + Record.Name + "' is " + shapeText(Record.Shape) +
        " in train.bin but its ONNX initializer is " + shapeText(Dims) +
        " or of another type; recompile train.bin from the "
        "model");
  Tensor.set_raw_data(Record.Data, Record.Bytes);
  return Status::success();
}

} // namespace

Status exportOnnx(const std::string &Path, const char *Template,
                  int64_t TemplateBytes,
                  const std::vector<StateTensor> &State) {
  onnx::ModelProto Model;
  if (TemplateBytes <= 0 ||
      !Model.ParseFromArray(Template, static_cast<int>(TemplateBytes)))
    return Status::error("this train.bin carries no ONNX model to export; "
                         "recompile it with a current fastnnc");
  std::map<std::string, const StateTensor *> Values;
  for (const StateTensor &Tensor : State)
    if (Tensor.Role == FNN_STATE_TRAINABLE ||
        Tensor.Role == FNN_STATE_STATISTIC)
      Values[Tensor.Name] = &Tensor;

  onnx::GraphProto &Graph = *Model.mutable_graph();
  for (onnx::TensorProto &Tensor : *Graph.mutable_initializer()) {
    auto It = Values.find(Tensor.name());
    if (It == Values.end()) {
      if (!hasData(Tensor))
        return Status::error("initializer '" + Tensor.name() +
                             "' of the embedded model has no value in "
                             "train.bin; recompile train.bin from the model");
      continue;
    }
    if (Status S = fill(Tensor, *It->second); !S.ok())
      return S;
    Values.erase(It);
  }
  // What is left are parameters the importer untied from an Identity: the
  // Identity's output becomes an initializer with the copy's trained value.
  auto *Nodes = Graph.mutable_node();
  for (const auto &Entry : Values) {
    const std::string &Name = Entry.first;
    const StateTensor *Record = Entry.second;
    auto Node = std::find_if(
        Nodes->begin(), Nodes->end(), [&](const onnx::NodeProto &N) {
          return N.op_type() == "Identity" && N.output_size() == 1 &&
                 N.output(0) == Name;
        });
    if (Node == Nodes->end())
      return Status::error("parameter '" + Name +
                           "' has no initializer or Identity output in the "
                           "embedded model; recompile train.bin from the "
                           "model");
    Nodes->erase(Node);
    onnx::TensorProto &Tensor = *Graph.add_initializer();
    Tensor.set_name(Name);
    Tensor.set_data_type(onnxDataType(Record->Dtype));
    for (int64_t Dim : Record->Shape)
      Tensor.add_dims(Dim);
    if (Status S = fill(Tensor, *Record); !S.ok())
      return S;
  }

  std::string Bytes;
  if (!Model.SerializeToString(&Bytes))
    return Status::error(Path + ": the model exceeds protobuf's 2 GB limit");
  return writeFileAtomically(Path, {{Bytes.data(), Bytes.size()}});
}

} // namespace fastnn::trainer
