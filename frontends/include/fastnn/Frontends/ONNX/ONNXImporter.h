//===- ONNXImporter.h - ONNX model to fastnn IR -----------------*- C++ -*-===//
//
// Reads an ONNX model (binary protobuf, or ONNX's textual syntax for files
// ending in .onnxtxt), validates it with ONNX's own checker, brings opsets
// below 13 up with ONNX's version converter, and imports the graph into a
// module holding one `fastnn.parameter` per floating-point initializer and a
// function `@forward` over statically shaped tensors.
//
// Every failure is reported as an MLIR diagnostic whose location names the
// file and, for node-level problems, the ONNX node.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_FRONTENDS_ONNX_ONNXIMPORTER_H
#define FASTNN_FRONTENDS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>

namespace fastnn {

struct ONNXImportOptions {
  /// Replaces the first dimension of every graph input (fixed or symbolic);
  /// 0 keeps the model's sizes, which must then all be fixed.
  int64_t batchSize = 0;
  /// Name of the imported function.
  std::string functionName = "forward";
  /// When set, receives the model as read (before opset conversion and the
  /// batch-size change), serialized, with external data inlined and the
  /// data of the initializers that became parameters left out: what
  /// train.bin --export-onnx refills with trained values.
  std::string *exportTemplate = nullptr;
};

/// Imports the model at `path`; returns null after emitting a diagnostic.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXFile(mlir::MLIRContext &context, llvm::StringRef path,
               const ONNXImportOptions &options);

} // namespace fastnn

#endif // FASTNN_FRONTENDS_ONNX_ONNXIMPORTER_H
