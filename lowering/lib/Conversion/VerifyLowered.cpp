//===- VerifyLowered.cpp - the targets' last checks before emission -------===//

#include "fastnn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSet.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNVERIFYCPULOWERED
#define GEN_PASS_DEF_FASTNNVERIFYCUDALOWERED
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

/// Checks that `module` holds LLVM dialect ops only and declares no `fnn_`
/// function that abi.h does not, nor one of `forbidden` (functions of the
/// ABI that `target`'s runtime does not implement). Reports each at its op.
LogicalResult verifyLowered(ModuleOp module, StringRef target,
                            ArrayRef<StringRef> forbidden = {}) {
  bool accepted = true;
  // Pre-order, so that an op of another dialect is reported once, not
  // with everything inside it.
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return WalkResult::advance();
    if (!isa<LLVM::LLVMDialect>(op->getDialect())) {
      op->emitOpError("is left after the ")
          << target
          << " lowering: the object emitter translates the LLVM dialect only";
      accepted = false;
      return WalkResult::skip();
    }
    auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (function && function.isExternal() &&
        function.getName().starts_with("fnn_")) {
      if (!abiFunctions().contains(function.getName())) {
        function.emitOpError("declares @")
            << function.getName()
            << ", which the runtime ABI (fastnn/runtime/abi.h) does not "
               "declare";
        accepted = false;
      } else if (llvm::is_contained(forbidden, function.getName())) {
        function.emitOpError("declares @")
            << function.getName() << ", which the " << target
            << " runtime does not implement";
        accepted = false;
      }
    }
    return WalkResult::advance();
  });
  return success(accepted);
}

struct VerifyCPULoweredPass
    : public ::fastnn::impl::FastNNVerifyCPULoweredBase<VerifyCPULoweredPass> {
  void runOnOperation() override {
    if (failed(verifyLowered(getOperation(), "CPU")))
      signalPassFailure();
  }
};

struct VerifyCUDALoweredPass
    : public ::fastnn::impl::FastNNVerifyCUDALoweredBase<
          VerifyCUDALoweredPass> {
  void runOnOperation() override {
    // Host loop bodies: the CUDA runtime's arena is not host memory.
    if (failed(verifyLowered(getOperation(), "CUDA", {"fnn_parallel_for"})))
      signalPassFailure();
  }
};

} // namespace
