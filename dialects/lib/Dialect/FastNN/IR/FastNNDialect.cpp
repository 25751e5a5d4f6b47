//===- FastNNDialect.cpp - fastnn dialect ---------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNDialect.h"
#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fastnn;

#include "fastnn/Dialect/FastNN/IR/FastNNEnums.cpp.inc"
#include "fastnn/Dialect/FastNN/IR/FastNNOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fastnn/Dialect/FastNN/IR/FastNNAttrs.cpp.inc"

void FastNNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fastnn/Dialect/FastNN/IR/FastNNAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fastnn/Dialect/FastNN/IR/FastNNOps.cpp.inc"
      >();
}

Operation *FastNNDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
