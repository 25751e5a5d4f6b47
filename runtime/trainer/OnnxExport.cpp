//===- OnnxExport.cpp - train.bin --export-onnx ---------------------------===//

#include "fastnn/trainer/OnnxExport.h"

#include "fastnn/runtime/model.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

namespace fastnn::trainer {

using data::Status;
using runtime::TensorRecord;

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

std::string shapeText(const std::vector<int64_t> &Shape) {
  std::string Text = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    Text += (I ? ", " : "") + std::to_string(Shape[I]);
  return Text + "]";
}

Status fill(onnx::TensorProto &Tensor, const TensorRecord &Record,
            const unsigned char *Arena) {
  std::vector<int64_t> Dims(Tensor.dims().begin(), Tensor.dims().end());
  if (Dims != Record.shape || Tensor.data_type() != onnxDataType(Record.dtype))
    return Status::error(
        "parameter '" + Record.name + "' is " + shapeText(Record.shape) +
        " in train.bin but its ONNX initializer is " + shapeText(Dims) +
        " or of another type; recompile train.bin from the "
        "model");
  Tensor.set_raw_data(Arena + Record.offset,
                      static_cast<size_t>(Record.numElements() *
                                          runtime::dtypeBytes(Record.dtype)));
  return Status::success();
}

} // namespace

Status exportOnnx(const std::string &Path, const char *Template,
                  int64_t TemplateBytes, const std::vector<TensorRecord> &State,
                  const unsigned char *Arena) {
  onnx::ModelProto Model;
  if (TemplateBytes <= 0 ||
      !Model.ParseFromArray(Template, static_cast<int>(TemplateBytes)))
    return Status::error("this train.bin carries no ONNX model to export; "
                         "recompile it with a current fastnnc");
  std::map<std::string, const TensorRecord *> Values;
  for (const TensorRecord &Record : State)
    if (Record.kind == FNN_STATE_TRAINABLE ||
        Record.kind == FNN_STATE_STATISTIC)
      Values[Record.name] = &Record;

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
    if (Status S = fill(Tensor, *It->second, Arena); !S.ok())
      return S;
    Values.erase(It);
  }
  // What is left are parameters the importer untied from an Identity: the
  // Identity's output becomes an initializer with the copy's trained value.
  auto *Nodes = Graph.mutable_node();
  for (auto &[Name, Record] : Values) {
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
    Tensor.set_data_type(onnxDataType(Record->dtype));
    for (int64_t Dim : Record->shape)
      Tensor.add_dims(Dim);
    if (Status S = fill(Tensor, *Record, Arena); !S.ok())
      return S;
  }

  std::string Temporary = Path + ".tmp";
  {
    std::ofstream Out(Temporary, std::ios::binary | std::ios::trunc);
    if (!Out || !Model.SerializeToOstream(&Out) || !Out.flush())
      return Status::error(Path + ": cannot write the ONNX model (check the "
                                  "directory exists and has space)");
  }
  if (std::rename(Temporary.c_str(), Path.c_str()) != 0) {
    std::remove(Temporary.c_str());
    return Status::error(Path + ": cannot rename the written model into "
                                "place");
  }
  return Status::success();
}

} // namespace fastnn::trainer
