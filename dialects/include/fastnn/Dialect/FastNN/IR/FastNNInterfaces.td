//===- FastNNInterfaces.td - fastnn op interfaces, traits --*- tablegen -*-===//
//
// What passes ask of an op by kind (is it elementwise, does it care about
// the layout, which precision does it compute in, does it run as a runtime
// kernel) is said here once, on the ops, instead of in lists in each pass.
//
//===----------------------------------------------------------------------===//

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

def FastNN_ReductionBodyOpInterface : OpInterface<"ReductionBodyOpInterface"> {
  let cppNamespace = "::mlir::fastnn";
  let description = [{
    How a reduction combines elements, for reductions generated as loops:
    the accumulator starts from the identity and takes in one element at a
    time. Every op with the Reduction trait implements it.
  }];
  let methods = [
    InterfaceMethod<"The value the accumulator starts from.",
      "double", "getReductionIdentity">,
    InterfaceMethod<[{
        Builds the accumulator after `element` (both in the op's element
        type).
      }],
      "::mlir::Value", "buildCombine",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$accumulator, "::mlir::Value":$element)>
  ];
}

def FastNN_ActivationsOpInterface : OpInterface<"ActivationsOpInterface"> {
  let cppNamespace = "::mlir::fastnn";
  let description = [{
    Which operands and results of an op hold activations, for ops that also
    take parameters or statistics which keep their type when activations
    change it (batch norm's scale, bias, mean and variance stay f32 under
    fastnn-mixed-precision). Ops without the interface treat every
    floating-point operand and result as an activation.
  }];
  let methods = [
    InterfaceMethod<"The operand numbers of the activations.",
      "::llvm::SmallVector<unsigned>", "getActivationOperands">,
    InterfaceMethod<"The result numbers of the activations.",
      "::llvm::SmallVector<unsigned>", "getActivationResults">
  ];
}

def FastNN_ScalarBodyOpInterface : OpInterface<"ScalarBodyOpInterface"> {
  let cppNamespace = "::mlir::fastnn";
  let description = [{
    How an elementwise op computes one element of its result from one
    element of each operand, in arith and math ops: the body of the loop
    nest the op is generated as (and of the nests its elementwise users
    inline it into). Every op with the Elementwise trait implements it.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits an error and fails where buildScalarBody does not support
        the op's element types (the generated loops take fewer types than
        the op).
      }],
      "::llvm::LogicalResult", "verifyScalarBody", (ins), "",
      [{ return ::mlir::success(); }]>,
    InterfaceMethod<[{
        The element type buildScalarBody computes in before half precision
        widens to f32: the first operand's.
      }],
      "::mlir::Type", "getScalarBodyType", (ins), "",
      [{
        return ::llvm::cast<::mlir::ShapedType>(
            $_op->getOperand(0).getType()).getElementType();
      }]>,
    InterfaceMethod<[{
        Builds the result element from `operands`, one element per
        operand. Arithmetic happens in `computeType`: getScalarBodyType(),
        or f32 where that is bf16 or f16 (the caller widens
        half-precision operands to it and rounds the result back).
        `elementIndex(builder, loc, dim)` builds the element's index along
        result dimension `dim`, for ops whose value depends on where the
        element is.
      }],
      "::mlir::Value", "buildScalarBody",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::ValueRange":$operands, "::mlir::Type":$computeType,
           "::llvm::function_ref<::mlir::Value(::mlir::OpBuilder &, "
           "::mlir::Location, int64_t)>":$elementIndex)>
  ];
}

//===----------------------------------------------------------------------===//
// Traits (C++: ::mlir::OpTrait::fastnn::<name>, op->hasTrait<...>())
//===----------------------------------------------------------------------===//

class FastNN_OpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::mlir::OpTrait::fastnn";
}

// Each result element is a function of the operands' elements at the same
// position (numpy-broadcast to the result's shape), and of that position:
// the op is generated as one loop nest, into which elementwise producers of
// the same shape can be inlined.
def FastNN_ElementwiseTrait : FastNN_OpTrait<"Elementwise">;
// The trait with its scalar body; the second form for ops whose body takes
// fewer element types than the op (they define verifyScalarBody).
def FastNN_Elementwise : TraitList<[FastNN_ElementwiseTrait,
    DeclareOpInterfaceMethods<FastNN_ScalarBodyOpInterface>]>;
def FastNN_ElementwiseOfSomeTypes : TraitList<[FastNN_ElementwiseTrait,
    DeclareOpInterfaceMethods<FastNN_ScalarBodyOpInterface,
                              ["verifyScalarBody"]>]>;

// Computes each element from the operands' elements at the same (numpy-
// broadcast) position only, not from the position itself: permuting the
// dimensions of every operand of the result's rank the same way permutes
// the result's, so fastnn-layout moves transposes through the op.
def FastNN_LayoutAgnostic : FastNN_OpTrait<"LayoutAgnostic">;

// Has a `layout` attribute (NCHW or NHWC) that the runtime kernels take
// either way; fastnn-layout sets it to the layout the target's kernels
// prefer.
def FastNN_SelectableLayout : FastNN_OpTrait<"SelectableLayout">;

// fastnn-mixed-precision computes the op in the low type whatever its
// inputs are (the products where the low type pays: convolutions, matrix
// products; TensorFlow's allow list).
def FastNN_LowPrecision : FastNN_OpTrait<"LowPrecision">;

// fastnn-mixed-precision computes the op in the low type when an
// activation arrives in it (ops that move, select or combine values
// without losing accuracy in it; TensorFlow's infer list). Ops with
// neither precision trait stay as they are.
def FastNN_FollowsPrecision : FastNN_OpTrait<"FollowsPrecision">;

// Runs as a call of a runtime kernel (abi.h) rather than as generated
// loops; the exception is a reduction that fastnn-plan-fusion marks
// `fastnn.codegen = "loops"`.
def FastNN_RunsAsKernel : FastNN_OpTrait<"RunsAsKernel">;

// The op's kernel can apply a following relu to its (float) result as it
// writes it (oneDNN post-ops, cuDNN and cuBLASLt epilogues):
// fastnn-plan-fusion records such a relu as the op's `fastnn.post_op`.
def FastNN_AcceptsPostOp : FastNN_OpTrait<"AcceptsPostOp">;

// A backward op whose kernel is made from its forward op's kernel and
// reads what it saved (argmax, scaling): the forward op must run as the
// kernel's training variant.
def FastNN_ReusesForwardKernel : FastNN_OpTrait<"ReusesForwardKernel">;

// Result i is operand i's value in operand i's memory (a reshape's view,
// inference dropout's identity, the batch next_batch fetches into the input
// buffers): the lowering gives it no buffer and no code of its own.
def FastNN_ResultsAliasOperands : FastNN_OpTrait<"ResultsAliasOperands">;

// Reduces its single operand over the `axes` attribute, with `keepdims`;
// with its combining step.
def FastNN_ReductionTrait : FastNN_OpTrait<"Reduction">;
def FastNN_Reduction : TraitList<[FastNN_ReductionTrait,
    DeclareOpInterfaceMethods<FastNN_ReductionBodyOpInterface>]>;

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNINTERFACES_TD
