//===- TensorImport.cpp - ONNX tensors to MLIR attributes -----------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <fstream>

using namespace mlir;

namespace fastnn::onnx_import {

Type convertElementType(int32_t onnxType, MLIRContext *context) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

namespace {

size_t storageBytes(Type elementType) {
  return elementType.isInteger(1) ? 1 : elementType.getIntOrFloatBitWidth() / 8;
}

/// Copies a repeated field into `data`, narrowing each value to the element
/// size (ONNX stores int8/int16/bool/float16/bfloat16 in int32_data).
template <typename Field>
void packRepeated(const Field &field, size_t elementBytes,
                  std::vector<char> &data) {
  data.resize(field.size() * elementBytes);
  for (int i = 0; i < field.size(); ++i) {
    auto value = field.Get(i);
    // Little-endian host: the low bytes of the value are the element.
    std::memcpy(data.data() + i * elementBytes, &value, elementBytes);
  }
}

std::string readExternalData(const onnx::TensorProto &tensor,
                             StringRef modelDir, size_t expectedBytes,
                             std::vector<char> &data) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    try {
      if (key == "location")
        location = entry.value();
      else if (key == "offset")
        offset = std::stoull(entry.value());
      else if (key == "length")
        length = std::stoull(entry.value());
    } catch (const std::exception &) {
      return "external data of '" + tensor.name() + "' has a malformed " + key +
             " '" + entry.value() + "'";
    }
  }
  if (std::string error = checkExternalLocation(tensor); !error.empty())
    return error;
  llvm::SmallString<256> file(modelDir);
  llvm::sys::path::append(file, location);
  uint64_t fileSize = 0;
  if (llvm::sys::fs::file_size(file, fileSize))
    return "cannot open external data file '" + std::string(file) +
           "' of tensor '" + tensor.name() + "'";
  uint64_t bytes = length.value_or(expectedBytes);
  if (bytes != expectedBytes)
    return "external data of '" + tensor.name() + "' has " +
           std::to_string(bytes) + " bytes; its shape needs " +
           std::to_string(expectedBytes);
  if (offset > fileSize || fileSize - offset < bytes)
    return "external data file '" + std::string(file) + "' is too short for '" +
           tensor.name() + "' (needs " + std::to_string(offset + bytes) +
           " bytes, has " + std::to_string(fileSize) + ")";
  std::ifstream in(std::string(file), std::ios::binary);
  data.resize(bytes);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(data.data(), static_cast<std::streamsize>(bytes)))
    return "cannot read external data of '" + tensor.name() + "' from '" +
           std::string(file) + "'";
  return "";
}

} // namespace

std::string checkExternalLocation(const onnx::TensorProto &tensor) {
  const std::string *location = nullptr;
  for (const auto &entry : tensor.external_data())
    if (entry.key() == "location")
      location = &entry.value();
  if (!location || location->empty())
    return "external data of '" + tensor.name() + "' names no location";
  if (llvm::sys::path::is_absolute(*location) ||
      StringRef(*location).contains(".."))
    return "external data of '" + tensor.name() +
           "' must be a path relative to the model's directory, without "
           "'..', got '" +
           *location + "'";
  return "";
}

std::string checkTensorDims(const onnx::TensorProto &tensor,
                            int64_t elementBytes) {
  auto dimsText = [&] {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "[";
    llvm::interleaveComma(tensor.dims(), os);
    os << "]";
    return text;
  };
  int64_t bytes = elementBytes;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return "tensor '" + tensor.name() + "' has a negative dimension in " +
             dimsText();
    if (llvm::MulOverflow(bytes, dim, bytes))
      return "tensor '" + tensor.name() + "' has dimensions " + dimsText() +
             " whose size overflows 64 bits";
  }
  return "";
}

std::string tensorTypeOf(const onnx::TensorProto &tensor, Type elementType,
                         RankedTensorType &type) {
  // The byte size must be countable before anything is allocated for it or
  // compared with the data the file holds.
  if (std::string error = checkTensorDims(tensor, storageBytes(elementType));
      !error.empty())
    return error;
  type = RankedTensorType::get(
      SmallVector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
      elementType);
  return "";
}

std::string readTensorData(const onnx::TensorProto &tensor, StringRef modelDir,
                           RankedTensorType type, std::vector<char> &data) {
  Type elementType = type.getElementType();
  size_t elementBytes = storageBytes(elementType);
  size_t expectedBytes = type.getNumElements() * elementBytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return readExternalData(tensor, modelDir, expectedBytes, data);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    data.assign(raw.begin(), raw.end());
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      packRepeated(tensor.float_data(), elementBytes, data);
      break;
    case onnx::TensorProto::DOUBLE:
      packRepeated(tensor.double_data(), elementBytes, data);
      break;
    case onnx::TensorProto::INT64:
      packRepeated(tensor.int64_data(), elementBytes, data);
      break;
    default:
      packRepeated(tensor.int32_data(), elementBytes, data);
      break;
    }
  }
  if (data.size() != expectedBytes)
    return "tensor '" + tensor.name() + "' holds " +
           std::to_string(data.size()) + " bytes, but its shape needs " +
           std::to_string(expectedBytes) +
           " (the file is truncated or inconsistent)";
  return "";
}

DenseElementsAttr makeDenseAttr(RankedTensorType type, ArrayRef<char> data) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> values;
    for (char c : data)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

} // namespace fastnn::onnx_import
