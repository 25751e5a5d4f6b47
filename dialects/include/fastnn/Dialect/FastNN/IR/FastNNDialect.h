//===- FastNNDialect.h - fastnn dialect -------------------------*- C++ -*-===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNDIALECT_H
#define FASTNN_DIALECT_FASTNN_IR_FASTNNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOpsDialect.h.inc"

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNDIALECT_H
