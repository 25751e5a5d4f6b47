//===- ImporterImpl.h - internals of the ONNX importer ---------*- C++ -*-===//
//
// What the operator families (ops/) share with the graph importer: tensor
// conversion, the NodeImporter an op importer works through, and the
// per-operator records. Model loading and the graph importer itself are in
// ModelImport.h.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H
#define FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H

#include "fastnn/Frontends/ONNX/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
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

/// An error message when one of a tensor's dims is negative or their
/// product times elementBytes overflows 64 bits; empty otherwise.
std::string checkTensorDims(const onnx::TensorProto &tensor,
                            int64_t elementBytes = 1);

/// The tensor type of an initializer or constant from its dims, checked by
/// checkTensorDims; an error message, empty on success.
std::string tensorTypeOf(const onnx::TensorProto &tensor,
                         mlir::Type elementType, mlir::RankedTensorType &type);

/// An error message when a tensor's external data is not named by a path
/// inside the model's directory (absolute, or with '..'); empty otherwise.
std::string checkExternalLocation(const onnx::TensorProto &tensor);

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
// Per-node import (GraphImporter.cpp, OpRecords.cpp, ops/)
//===----------------------------------------------------------------------===//

class GraphImporter;

/// What an op importer sees of the node it converts: typed access to inputs
/// and attributes (each attribute read is marked handled, so attributes no
/// importer understood are reported), outputs to define, and op creation
/// with type inference that reports failures instead of aborting.
class NodeImporter {
public:
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               mlir::Location loc, int64_t version);

  const onnx::NodeProto &node() const { return nodeProto; }
  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &builder();
  mlir::MLIRContext *context() { return loc.getContext(); }
  /// The operator's version the model's opset selects, one its record
  /// lists: what an importer of several versions branches on.
  int64_t version() const { return operatorVersion; }

  /// Emits an error at the node naming its op type; always returns failure.
  mlir::LogicalResult error(const llvm::Twine &message);

  size_t numInputs() const { return nodeProto.input_size(); }
  bool hasInput(size_t i) const {
    return static_cast<int>(i) < nodeProto.input_size() &&
           !nodeProto.input(i).empty();
  }
  mlir::FailureOr<mlir::Value> input(size_t i);
  /// Every input, each required (variadic operators: Concat, Where...).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> allInputs();
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
  /// The attribute `name` if it holds a `type`; one of another type is
  /// handled, recorded as the node's error and read as absent.
  const onnx::AttributeProto *
  findAttr(llvm::StringRef name, onnx::AttributeProto::AttributeType type);

  GraphImporter &graph;
  const onnx::NodeProto &nodeProto;
  mlir::Location loc;
  int64_t operatorVersion;
  llvm::StringSet<> handledAttrs;
  std::string attrTypeError;
};

using OpImporter = mlir::LogicalResult (*)(NodeImporter &);

/// Everything the importer knows about one ONNX operator of the default
/// domain; GraphImporter consults it and never an operator's name. Listed
/// in field order: {"Reshape", importReshape, {13, 14}, {1}}.
struct OpRecord {
  /// The operator's name (NodeProto::op_type).
  llvm::StringRef opType;
  /// Converts one node; unread attributes are reported after it returns.
  OpImporter importer;
  /// The operator's versions (ONNX since-versions) whose semantics the
  /// importer implements. A node has the operator's latest version not
  /// newer than the model's opset; any other is rejected at the node.
  llvm::SmallVector<int64_t, 2> versions;
  /// Input positions that must be known at compile time (they decide a
  /// shape or play an attribute's role). Initializers read only in such
  /// positions are constants of the model, not trainable parameters.
  llvm::SmallVector<int, 2> constantInputs = {};
  /// Input positions holding running statistics: their initializers become
  /// `statistic` parameters, which the trainer updates and the optimizer
  /// never does.
  llvm::SmallVector<int, 2> statisticInputs = {};
};

//===----------------------------------------------------------------------===//
// Operator versions (OperatorVersions.cpp)
//===----------------------------------------------------------------------===//

/// The newest opset of the default domain that the pinned onnx release
/// defines (the generated table OperatorVersions.inc).
int64_t newestOpset();

/// The version of `opType` that a model of `opset` uses: its greatest
/// since-version not newer than `opset`, or 0 if ONNX defines none by then.
int64_t selectedVersion(llvm::StringRef opType, int64_t opset);

/// Whether `version` is one of the since-versions ONNX defines for `opType`.
bool isOperatorVersion(llvm::StringRef opType, int64_t version);

/// The record of an ONNX operator of the default domain, or null.
const OpRecord *lookupOpRecord(llvm::StringRef opType);

/// The records of each operator family, one list per file in ops/;
/// OpRecords.cpp assembles them into the table lookupOpRecord searches.
std::vector<OpRecord> convolutionOpRecords();
std::vector<OpRecord> normalizationOpRecords();
std::vector<OpRecord> matrixProductOpRecords();
std::vector<OpRecord> elementwiseOpRecords();
std::vector<OpRecord> randomOpRecords();
std::vector<OpRecord> reductionOpRecords();
std::vector<OpRecord> resamplingOpRecords();
std::vector<OpRecord> shapeOpRecords();
std::vector<OpRecord> scatterOpRecords();
std::vector<OpRecord> constantOpRecords();

//===----------------------------------------------------------------------===//
// Helpers of the operator families (ops/)
//===----------------------------------------------------------------------===//

/// Defines output 0 as `value`, or fails if building it failed.
inline mlir::LogicalResult defineResult(NodeImporter &n,
                                        mlir::FailureOr<mlir::Value> value) {
  if (mlir::failed(value))
    return mlir::failure();
  n.setOutput(0, *value);
  return mlir::success();
}

inline mlir::NamedAttribute namedAttr(NodeImporter &n, llvm::StringRef name,
                                      mlir::Attribute value) {
  return n.builder().getNamedAttr(name, value);
}

inline mlir::DenseI64ArrayAttr i64Array(NodeImporter &n,
                                        llvm::ArrayRef<int64_t> values) {
  return n.builder().getDenseI64ArrayAttr(values);
}

/// Axes of Squeeze, Unsqueeze and the reductions: the attribute `axes` in
/// the operators' older versions, the constant input 1 when `axesInput`
/// (ops/Reduction.cpp).
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
readAxes(NodeImporter &n, bool axesInput);

} // namespace fastnn::onnx_import

#endif // FASTNN_FRONTENDS_ONNX_IMPORTERIMPL_H
