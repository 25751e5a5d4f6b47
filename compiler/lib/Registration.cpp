//===- Registration.cpp - everything fastnn tools register ----------------===//

#include "fastnn/Compiler/Registration.h"
#include "fastnn/Compiler/Pipelines.h"
#include "fastnn/Dialect/FastNN/IR/FastNNDialect.h"

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void fastnn::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::fastnn::FastNNDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect,
                  mlir::LLVM::LLVMDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect>();
}

void fastnn::registerPasses() {
  mlir::registerTransformsPasses();
  fastnn::registerFastNNConversionPasses();
  fastnn::registerFastNNTransformsPasses();
  fastnn::registerPipelines();
}
