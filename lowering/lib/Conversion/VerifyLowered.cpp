//===- VerifyLowered.cpp - the fastnn-verify-cpu-lowered pass -------------===//

#include "fastnn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSet.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNVERIFYCPULOWERED
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;

namespace {

/// The functions runtime/include/fastnn/runtime/abi.h declares, read from
/// the header when the build is configured.
const llvm::StringSet<> &abiFunctions() {
  static const llvm::StringSet<> names = {
#include "AbiFunctions.inc"
  };
  return names;
}

struct VerifyCPULoweredPass
    : public ::fastnn::impl::FastNNVerifyCPULoweredBase<VerifyCPULoweredPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool accepted = true;
    // Pre-order, so that an op of another dialect is reported once, not
    // with everything inside it.
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == module.getOperation())
        return WalkResult::advance();
      if (!isa<LLVM::LLVMDialect>(op->getDialect())) {
        op->emitOpError("is left after the CPU lowering: the object emitter "
                        "translates the LLVM dialect only");
        accepted = false;
        return WalkResult::skip();
      }
      auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (function && function.isExternal() &&
          function.getName().starts_with("fnn_") &&
          !abiFunctions().contains(function.getName())) {
        function.emitOpError("declares @")
            << function.getName()
            << ", which the runtime ABI (fastnn/runtime/abi.h) does not "
               "declare";
        accepted = false;
      }
      return WalkResult::advance();
    });
    if (!accepted)
      signalPassFailure();
  }
};

} // namespace
