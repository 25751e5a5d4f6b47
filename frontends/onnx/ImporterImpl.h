//===- ImporterImpl.h - internals of the ONNX importer ---------*- C++ -*-===//

#ifndef FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H
#define FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H

#include "fastnn/Frontends/ONNX/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>

namespace fastnn::onnx_import {

//===----------------------------------------------------------------------===//
// Tensors (TensorImport.cpp)
//===----------------------------------------------------------------------===//

/// The MLIR element type of an ONNX TensorProto data type, or null.
mlir::Type convertElementType(int32_t onnxType, mlir::MLIRContext *context);

/// Reads a tensor's elements into a packed little-endian buffer (one byte per
/// bool), from raw_data, the typed repeated fields or external data stored
/// relative to `modelDir`. Returns an error message, empty on success.
std::string readTensorData(const onnx::TensorProto &tensor,
                           llvm::StringRef modelDir,
                           mlir::RankedTensorType type,
                           std::vector<char> &data);

/// A constant attribute holding `data` (as readTensorData produced it).
mlir::DenseElementsAttr makeDenseAttr(mlir::RankedTensorType type,
                                      llvm::ArrayRef<char> data);

//===----------------------------------------------------------------------===//
// Model loading (ModelLoader.cpp)
//===----------------------------------------------------------------------===//

/// Reads, checks and normalises a model; returns an error message, empty on
/// success. The batch size (when non-zero) is applied to the graph inputs
/// before ONNX shape inference runs. `asRead`, when given, receives the
/// checked model before any normalisation.
std::string loadModel(llvm::StringRef path, int64_t batchSize,
                      onnx::ModelProto &model,
                      onnx::ModelProto *asRead = nullptr);

/// Turns the model as read into ONNXImportOptions::exportTemplate: the data
/// of initializers named in `parameters` is dropped, external data of the
/// others is inlined. Returns an error message, empty on success.
std::string makeExportTemplate(mlir::MLIRContext &context,
                               onnx::ModelProto model,
                               const llvm::StringSet<> &parameters,
                               llvm::StringRef modelDir, std::string &out);

//===----------------------------------------------------------------------===//
// Per-node import (GraphImporter.cpp, OpImporters.cpp)
//===----------------------------------------------------------------------===//

class GraphImporter;

/// What an op importer sees of the node it converts: typed access to inputs
/// and attributes (each attribute read is marked handled, so attributes no
/// importer understood are reported), outputs to define, and op creation
/// with type inference that reports failures instead of aborting.
class NodeImporter {
public:
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               mlir::Location loc, int64_t opset);

  const onnx::NodeProto &node() const { return nodeProto; }
  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &builder();
  mlir::MLIRContext *context() { return loc.getContext(); }
  int64_t opset() const { return opsetVersion; }

  /// Emits an error at the node naming its op type; always returns failure.
  mlir::LogicalResult error(const llvm::Twine &message);

  size_t numInputs() const { return nodeProto.input_size(); }
  bool hasInput(size_t i) const {
    return static_cast<int>(i) < nodeProto.input_size() &&
           !nodeProto.input(i).empty();
  }
  mlir::FailureOr<mlir::Value> input(size_t i);
  mlir::FailureOr<mlir::RankedTensorType> inputType(size_t i);
  /// The input's value, which must be computable at compile time.
  mlir::FailureOr<mlir::DenseElementsAttr> constantInput(size_t i);
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(size_t i);
  mlir::FailureOr<double> constantScalar(size_t i);

  /// Defines output `i`; an absent optional output is fine.
  void setOutput(size_t i, mlir::Value value);
  /// True if output `i` exists and something reads it.
  bool isUsed(size_t i) const;
  /// Fails if output `i` exists and something reads it.
  mlir::LogicalResult requireUnusedOutput(size_t i, llvm::StringRef what);

  bool hasAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue);
  double floatAttr(llvm::StringRef name, double defaultValue);
  std::string stringAttr(llvm::StringRef name, llvm::StringRef defaultValue);
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name);
  std::optional<llvm::SmallVector<float>> floatsAttr(llvm::StringRef name);
  const onnx::TensorProto *tensorAttr(llvm::StringRef name);
  /// Fails naming the first attribute no importer read.
  mlir::LogicalResult checkAllAttrsHandled();

  /// Creates a fastnn op whose result type is inferred, then folds it.
  template <typename OpT>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    return createInferred(OpT::getOperationName(), operands, attributes);
  }
  /// Folds a just-built single-result op (for ops built with explicit types).
  mlir::Value fold(mlir::Operation *op);

  /// A rank-0 constant of `elementType` holding `value`.
  mlir::Value scalarConstant(mlir::Type elementType, double value);
  mlir::Value reshape(mlir::Value input, llvm::ArrayRef<int64_t> shape);

  /// For Identity: a value read from a parameter becomes a separate
  /// parameter named after the node's output.
  mlir::Value untieParameter(mlir::Value value);

  /// Normalises a possibly negative axis against `rank`.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

private:
  mlir::FailureOr<mlir::Value>
  createInferred(llvm::StringRef opName, mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attributes);
  const onnx::AttributeProto *findAttr(llvm::StringRef name);

  GraphImporter &graph;
  const onnx::NodeProto &nodeProto;
  mlir::Location loc;
  int64_t opsetVersion;
  llvm::StringSet<> handledAttrs;
};

using OpImporter = mlir::LogicalResult (*)(NodeImporter &);

/// True if operand `index` of `opType` must be a compile-time constant (it
/// decides a shape or plays an attribute's role). Initializers used only in
/// such positions are constants of the model, not trainable parameters.
bool isConstantOperand(llvm::StringRef opType, int index);

/// The importer for an ONNX op type of the default domain, or null.
OpImporter lookupOpImporter(llvm::StringRef opType);

/// Imports one graph into a module.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, const onnx::ModelProto &model,
                llvm::StringRef path, const ONNXImportOptions &options);

  mlir::OwningOpRef<mlir::ModuleOp> run();

  mlir::OpBuilder &builder() { return bodyBuilder; }
  mlir::FailureOr<mlir::Value> lookup(const std::string &name,
                                      mlir::Location loc);
  void define(const std::string &name, mlir::Value value);
  bool isUsed(const std::string &name) const { return usedNames.count(name); }
  /// Gives the value an Identity node produces from a parameter its own
  /// parameter, so that training never ties the two.
  mlir::Value untieParameter(mlir::Value value, const std::string &newName,
                             mlir::Location loc);

private:
  mlir::LogicalResult importInitializers();
  mlir::LogicalResult importInputs(llvm::SmallVectorImpl<mlir::Type> &types,
                                   llvm::SmallVectorImpl<std::string> &names);
  mlir::LogicalResult importNode(const onnx::NodeProto &node, size_t index);
  mlir::LogicalResult checkOutputShapes(llvm::ArrayRef<mlir::Value> results);
  mlir::Location nodeLoc(const onnx::NodeProto &node, size_t index);
  mlir::Location fileLoc();

  mlir::MLIRContext &context;
  const onnx::ModelProto &model;
  std::string path;
  std::string modelDir;
  ONNXImportOptions options;
  int64_t opset = 0;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::OpBuilder moduleBuilder;
  mlir::OpBuilder bodyBuilder;
  llvm::StringMap<mlir::Value> values;
  /// Initializers imported lazily as constants (integer tensors).
  llvm::StringMap<const onnx::TensorProto *> constantInitializers;
  llvm::StringSet<> usedNames;
  llvm::StringSet<> statisticNames;
  /// Identity copies of parameters imported as parameters of their own.
  int64_t untiedParameters = 0;
};

} // namespace fastnn::onnx_import

#endif // FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H
