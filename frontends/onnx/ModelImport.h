//===- ModelImport.h - loading a model and importing its graph -*- C++ -*-===//
//
// The model-level internals of the ONNX importer: reading and normalising a
// model (ModelLoader.cpp), the export template (ExportTemplate.cpp) and the
// graph importer (GraphImporter.cpp), which converts each node through its
// operator's record.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_FRONTENDS_ONNX_MODELIMPORT_H
#define FASTNN_FRONTENDS_ONNX_MODELIMPORT_H

#include "ImporterImpl.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace fastnn::onnx_import {

//===----------------------------------------------------------------------===//
// Model loading (ModelLoader.cpp)
//===----------------------------------------------------------------------===//

/// The name errors give a node: its own, or `<op_type>#<index in the graph>`
/// for an unnamed one.
std::string nodeDisplayName(const onnx::NodeProto &node, size_t index);

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
// Graph import (GraphImporter.cpp)
//===----------------------------------------------------------------------===//

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

#endif // FASTNN_FRONTENDS_ONNX_MODELIMPORT_H
