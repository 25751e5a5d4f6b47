//===- fastnnc-opt.cpp - mlir-opt for fastnn IR ---------------------------===//

#include "fastnn/Compiler/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  fastnn::registerDialects(registry);
  fastnn::registerPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fastnn optimizer: inspect and transform fastnn IR\n",
      registry));
}
