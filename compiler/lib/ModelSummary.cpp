//===- ModelSummary.cpp - a human-readable digest of a module -------------===//

#include "fastnn/Compiler/ModelSummary.h"
#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace {

void printValues(llvm::raw_ostream &os, StringRef title, TypeRange types,
                 function_ref<Attribute(unsigned)> nameOf) {
  os << title << ":\n";
  for (auto [i, type] : llvm::enumerate(types)) {
    auto name = dyn_cast_or_null<StringAttr>(nameOf(i));
    os << "  " << (name ? name.getValue() : StringRef("#" + std::to_string(i)))
       << ": " << type << "\n";
  }
}

} // namespace

namespace fastnn {
void printModelSummary(ModuleOp module, llvm::raw_ostream &os) {
  if (auto source = module->getAttrOfType<StringAttr>("fastnn.source"))
    os << "model: " << source.getValue() << "\n";
  module.walk([&](func::FuncOp func) {
    os << "function @" << func.getSymName() << "\n";
    printValues(os, "inputs", func.getArgumentTypes(),
                [&](unsigned i) { return func.getArgAttr(i, "fastnn.name"); });
    printValues(os, "outputs", func.getResultTypes(), [&](unsigned i) {
      return func.getResultAttr(i, "fastnn.name");
    });
  });

  struct RoleTotals {
    int64_t count = 0, elements = 0, bytes = 0;
  };
  llvm::MapVector<StringRef, RoleTotals> roles;
  for (auto parameter : module.getOps<mlir::fastnn::ParameterOp>()) {
    RankedTensorType type = parameter.getType();
    RoleTotals &totals =
        roles[mlir::fastnn::stringifyParamRole(parameter.getRole())];
    ++totals.count;
    totals.elements += type.getNumElements();
    totals.bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
  os << "parameters:\n";
  for (auto &[role, totals] : roles)
    os << "  " << role << ": " << totals.count << " tensors, "
       << totals.elements << " elements, "
       << llvm::format("%.1f", totals.bytes / 1048576.0) << " MiB\n";

  // Compute ops only: the parameters' declarations and reads are what the
  // section above counts.
  llvm::MapVector<StringRef, int64_t> opCounts;
  module.walk([&](Operation *op) {
    if (isa<mlir::fastnn::FastNNDialect>(op->getDialect()) &&
        !isa<mlir::fastnn::ParameterOp, mlir::fastnn::ParamOp>(op))
      ++opCounts[op->getName().getStringRef()];
  });
  os << "ops:\n";
  for (auto &[name, count] : opCounts)
    os << "  " << name << ": " << count << "\n";
}
} // namespace fastnn
