//===- FastNNOps.h - fastnn operations --------------------------*- C++ -*-===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_H
#define FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_H

#include "fastnn/Dialect/FastNN/IR/FastNNDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"

#include "fastnn/Dialect/FastNN/IR/FastNNEnums.h.inc"
#include "fastnn/Dialect/FastNN/IR/FastNNInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fastnn/Dialect/FastNN/IR/FastNNAttrs.h.inc"

#define GET_OP_CLASSES
#include "fastnn/Dialect/FastNN/IR/FastNNOps.h.inc"

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNOPS_H
