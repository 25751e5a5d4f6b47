//===- Diagnostics.h - one-line user-facing diagnostics ---------*- C++ -*-===//

#ifndef FASTNN_COMPILER_DIAGNOSTICS_H
#define FASTNN_COMPILER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace fastnn {

/// Renders a location for users: `file` for whole-file problems,
/// `file: node 'name'` for an ONNX node, `file:line:col` for text input.
std::string describeLocation(mlir::Location loc);

/// Prints every diagnostic as one line, `tool: severity: location: message`,
/// on stderr; notes attached by MLIR are dropped to keep that one line.
class OneLineDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  OneLineDiagnosticHandler(mlir::MLIRContext *context, llvm::StringRef tool);
};

} // namespace fastnn

#endif // FASTNN_COMPILER_DIAGNOSTICS_H
