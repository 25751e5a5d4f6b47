//===- Registration.cpp - everything fastnn tools register ----------------===//

#include "fastnn/Compiler/Registration.h"
#include "fastnn/Dialect/FastNN/IR/FastNNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void fastnn::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::fastnn::FastNNDialect, mlir::func::FuncDialect>();
}

void fastnn::registerPasses() { mlir::registerTransformsPasses(); }
