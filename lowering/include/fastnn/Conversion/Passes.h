//===- Passes.h - fastnn lowering passes ------------------------*- C++ -*-===//

#ifndef FASTNN_CONVERSION_PASSES_H
#define FASTNN_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"
#include <memory>

namespace fastnn {

#define GEN_PASS_DECL
#include "fastnn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fastnn/Conversion/Passes.h.inc"

} // namespace fastnn

#endif // FASTNN_CONVERSION_PASSES_H
