//===- FastNNTraits.h - fastnn op traits ------------------------*- C++ -*-===//
//
// The marker traits of FastNNInterfaces.td, which says what each means.
// Passes test them with op->hasTrait<OpTrait::fastnn::Name>().
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNTRAITS_H
#define FASTNN_DIALECT_FASTNN_IR_FASTNNTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait::fastnn {

template <typename ConcreteType>
class Elementwise : public TraitBase<ConcreteType, Elementwise> {};

template <typename ConcreteType>
class LayoutAgnostic : public TraitBase<ConcreteType, LayoutAgnostic> {};

template <typename ConcreteType>
class SelectableLayout : public TraitBase<ConcreteType, SelectableLayout> {};

template <typename ConcreteType>
class LowPrecision : public TraitBase<ConcreteType, LowPrecision> {};

template <typename ConcreteType>
class FollowsPrecision : public TraitBase<ConcreteType, FollowsPrecision> {};

template <typename ConcreteType>
class RunsAsKernel : public TraitBase<ConcreteType, RunsAsKernel> {};

template <typename ConcreteType>
class AcceptsPostOp : public TraitBase<ConcreteType, AcceptsPostOp> {};

template <typename ConcreteType>
class ReusesForwardKernel
    : public TraitBase<ConcreteType, ReusesForwardKernel> {};

template <typename ConcreteType>
class ResultsAliasOperands
    : public TraitBase<ConcreteType, ResultsAliasOperands> {};

template <typename ConcreteType>
class Reduction : public TraitBase<ConcreteType, Reduction> {};

} // namespace mlir::OpTrait::fastnn

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNTRAITS_H
