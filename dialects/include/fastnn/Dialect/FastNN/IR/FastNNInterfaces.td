//===- FastNNInterfaces.td - fastnn op interfaces ----------*- tablegen -*-===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNINTERFACES_TD
#define FASTNN_DIALECT_FASTNN_IR_FASTNNINTERFACES_TD

include "mlir/IR/OpBase.td"

def FastNN_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::fastnn";
  let description = [{
    The reverse-mode derivative of an op, used by fastnn-build-train-step.
    Every op the importer produces implements it, so that every imported
    model is trainable; the rules build ordinary fastnn ops (kernels such as
    conv2d_backward where a library does the work best).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradient of each operand from the gradients of the
        results (`resultGrads[i]` is null when nothing depends on result
        i). Sets `operandGrads` to one value per operand, null where the
        operand has no gradient (integer operands such as indices). Emits a
        diagnostic and fails where the op's configuration is not
        differentiable.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNINTERFACES_TD
