//===- Registration.h - everything fastnn tools register --------*- C++ -*-===//

#ifndef FASTNN_COMPILER_REGISTRATION_H
#define FASTNN_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fastnn {

/// Registers the fastnn dialect and the upstream dialects fastnn IR and its
/// lowerings use.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers every fastnn pass, the upstream passes its pipelines use and
/// the fastnn pipelines (Pipelines.h), so that fastnnc-opt can run each
/// one alone.
void registerPasses();

} // namespace fastnn

#endif // FASTNN_COMPILER_REGISTRATION_H
