//===- Diagnostics.cpp - one-line user-facing diagnostics -----------------===//

#include "fastnn/Compiler/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string fastnn::describeLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    std::string parent = describeLocation(name.getChildLoc());
    std::string node = "node '" + name.getName().str() + "'";
    return parent.empty() ? node : parent + ": " + node;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string text = file.getFilename().str();
    if (file.getLine() > 0)
      text += ":" + std::to_string(file.getLine()) + ":" +
              std::to_string(file.getColumn());
    return text;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return describeLocation(fused.getLocations().front());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(callSite.getCallee());
  return "";
}

static llvm::StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}

fastnn::OneLineDiagnosticHandler::OneLineDiagnosticHandler(MLIRContext *context,
                                                           llvm::StringRef tool)
    : ScopedDiagnosticHandler(context) {
  std::string toolName = tool.str();
  setHandler([toolName](Diagnostic &diag) {
    std::string message = diag.str();
    for (char &c : message)
      if (c == '\n')
        c = ' ';
    std::string where = describeLocation(diag.getLocation());
    llvm::errs() << toolName << ": " << severityName(diag.getSeverity()) << ": "
                 << (where.empty() ? "" : where + ": ") << message << "\n";
    return success();
  });
}
