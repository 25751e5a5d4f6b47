//===- OnnxInitializers.cpp - train.bin's init_from_onnx ------------------===//

#include "fastnn/trainer/OnnxInitializers.h"

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/abi.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace fastnn::trainer {

namespace fs = std::filesystem;

namespace {

/// The fnn_dtype of an ONNX floating-point type, or -1 for the others
/// (integer initializers are shapes and indices, never state).
int64_t dtypeOfOnnx(int32_t Type) {
  switch (Type) {
  case onnx::TensorProto::FLOAT:
    return FNN_F32;
  case onnx::TensorProto::FLOAT16:
    return FNN_F16;
  case onnx::TensorProto::BFLOAT16:
    return FNN_BF16;
  case onnx::TensorProto::DOUBLE:
    return FNN_F64;
  default:
    return -1;
  }
}

template <typename Field>
void packRepeated(const Field &Values, size_t ElementBytes,
                  std::vector<unsigned char> &Data) {
  Data.resize(Values.size() * ElementBytes);
  for (int I = 0; I < Values.size(); ++I) {
    auto Value = Values.Get(I);
    // Little endian: float16 and bfloat16 bits are int32_data's low bytes.
    std::memcpy(Data.data() + I * ElementBytes, &Value, ElementBytes);
  }
}

Status readExternal(const onnx::TensorProto &Tensor, const fs::path &Dir,
                    uint64_t Bytes, std::vector<unsigned char> &Data) {
  std::string Location;
  uint64_t Offset = 0, Length = Bytes;
  for (const auto &Entry : Tensor.external_data()) {
    try {
      if (Entry.key() == "location")
        Location = Entry.value();
      else if (Entry.key() == "offset")
        Offset = std::stoull(Entry.value());
      else if (Entry.key() == "length")
        Length = std::stoull(Entry.value());
    } catch (const std::exception &) {
      return Status::error("initializer '" + Tensor.name() +
                           "': malformed external data " + Entry.key() + " '" +
                           Entry.value() + "'");
    }
  }
  // As the importer: data files lie beside the model.
  if (Location.empty() || fs::path(Location).is_absolute() ||
      Location.find("..") != std::string::npos)
    return Status::error("initializer '" + Tensor.name() +
                         "': external data needs a location relative to the "
                         "model's directory, without '..', got '" +
                         Location + "'");
  std::string File = (Dir / Location).string();
  if (Length != Bytes)
    return Status::error(File + ": external data of '" + Tensor.name() +
                         "' has " + std::to_string(Length) +
                         " bytes; its shape needs " + std::to_string(Bytes));
  std::error_code Ec;
  uint64_t Size = fs::file_size(File, Ec);
  if (Ec)
    return Status::error(File + ": cannot read the external data of '" +
                         Tensor.name() + "': " + Ec.message());
  if (Offset > Size || Size - Offset < Bytes)
    return Status::error(File + ": too short for the external data of '" +
                         Tensor.name() + "' (needs " +
                         std::to_string(Offset + Bytes) + " bytes, has " +
                         std::to_string(Size) + ")");
  std::ifstream In(File, std::ios::binary);
  Data.resize(Bytes);
  In.seekg(static_cast<std::streamoff>(Offset));
  if (!In.read(reinterpret_cast<char *>(Data.data()),
               static_cast<std::streamsize>(Bytes)))
    return Status::error(File + ": cannot read the external data of '" +
                         Tensor.name() + "'");
  return Status::success();
}

Status readData(const onnx::TensorProto &Tensor, int64_t Dtype,
                const fs::path &Dir, uint64_t Bytes,
                std::vector<unsigned char> &Data) {
  if (Tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return readExternal(Tensor, Dir, Bytes, Data);
  size_t ElementBytes = static_cast<size_t>(runtime::dtypeBytes(Dtype));
  if (Tensor.has_raw_data())
    Data.assign(Tensor.raw_data().begin(), Tensor.raw_data().end());
  else if (Dtype == FNN_F32)
    packRepeated(Tensor.float_data(), ElementBytes, Data);
  else if (Dtype == FNN_F64)
    packRepeated(Tensor.double_data(), ElementBytes, Data);
  else
    packRepeated(Tensor.int32_data(), ElementBytes, Data);
  if (Data.size() != Bytes)
    return Status::error(
        "initializer '" + Tensor.name() + "' holds " +
        std::to_string(Data.size()) + " bytes, but its shape needs " +
        std::to_string(Bytes) + " (the file is truncated or inconsistent)");
  return Status::success();
}

} // namespace

Status readOnnxInitializers(const std::string &Path, OnnxInitializers &Out) {
  Out = OnnxInitializers();
  std::error_code Ec;
  uint64_t Size = fs::file_size(Path, Ec);
  if (Ec)
    return Status::error(Path +
                         ": cannot read the ONNX model: " + Ec.message());
  std::string Bytes(Size, '\0');
  std::ifstream In(Path, std::ios::binary);
  onnx::ModelProto Model;
  if (!In || !In.read(Bytes.data(), static_cast<std::streamsize>(Size)) ||
      Size > INT32_MAX ||
      !Model.ParseFromArray(Bytes.data(), static_cast<int>(Size)))
    return Status::error(Path + ": not an ONNX model (a binary ModelProto "
                                "under 2 GB, as torch.onnx.export writes)");
  Bytes.clear();
  fs::path Dir = fs::path(Path).parent_path();
  std::map<std::string, size_t> ByName;
  for (const onnx::TensorProto &Tensor : Model.graph().initializer()) {
    int64_t Dtype = dtypeOfOnnx(Tensor.data_type());
    if (Dtype < 0)
      continue;
    StateTensor T;
    T.Name = Tensor.name();
    T.Role = -1;
    T.Dtype = Dtype;
    uint64_t TensorBytes = static_cast<uint64_t>(runtime::dtypeBytes(Dtype));
    for (int64_t Dim : Tensor.dims()) {
      if (Dim < 0 || __builtin_mul_overflow(
                         TensorBytes, static_cast<uint64_t>(Dim), &TensorBytes))
        return Status::error(Path + ": initializer '" + Tensor.name() +
                             "' has an invalid shape");
      T.Shape.push_back(Dim);
    }
    std::vector<unsigned char> &Data = Out.Storage.emplace_back();
    if (Status S = readData(Tensor, Dtype, Dir, TensorBytes, Data); !S.ok())
      return Status::error(Path + ": " + S.message());
    T.Bytes = Data.size();
    ByName[T.Name] = Out.Tensors.size();
    Out.Tensors.push_back(std::move(T));
  }
  // Data pointers are taken once Storage no longer grows.
  for (size_t I = 0; I < Out.Tensors.size(); ++I)
    Out.Tensors[I].Data = Out.Storage[I].data();
  for (const onnx::NodeProto &Node : Model.graph().node()) {
    if (Node.op_type() != "Identity" || Node.input_size() != 1 ||
        Node.output_size() != 1)
      continue;
    auto It = ByName.find(Node.input(0));
    if (It == ByName.end() || ByName.count(Node.output(0)))
      continue;
    StateTensor Copy = Out.Tensors[It->second];
    Copy.Name = Node.output(0);
    Out.Tensors.push_back(std::move(Copy));
  }
  return Status::success();
}

Status loadOnnxWeights(const std::string &Path, const std::string &Described,
                       const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena, int64_t &Restored,
                       std::string &Warning) {
  Restored = 0;
  Warning.clear();
  OnnxInitializers From;
  if (Status S = readOnnxInitializers(Path, From); !S.ok())
    return S;
  RestoreReport Report;
  if (Status S = restoreTensors(From.Tensors, Described, State, Arena,
                                RestoreMode::Initialize, Report);
      !S.ok())
    return Status::error(S.message() +
                         "; the ONNX model must have this model's parameters "
                         "(the one it was compiled from, with other weights)");
  Restored = Report.Restored;
  if (!Report.Unused.empty()) {
    Warning = Path + ": " + std::to_string(Report.Unused.size()) +
              " of its initializers are not parameters of the model and "
              "were not used: ";
    for (size_t I = 0; I < Report.Unused.size() && I < 3; ++I)
      Warning += (I ? ", '" : "'") + Report.Unused[I] + "'";
    if (Report.Unused.size() > 3)
      Warning += ", ...";
  }
  return Status::success();
}

} // namespace fastnn::trainer
