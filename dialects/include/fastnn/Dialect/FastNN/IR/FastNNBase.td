//===- FastNNBase.td - fastnn dialect definition -----------*- tablegen -*-===//
//
// The fastnn dialect: tensor-level neural-network ops with static shapes, the
// IR that the ONNX importer produces and the training compiler transforms.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DIALECT_FASTNN_IR_FASTNNBASE_TD
#define FASTNN_DIALECT_FASTNN_IR_FASTNNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def FastNN_Dialect : Dialect {
  let name = "fastnn";
  let cppNamespace = "::mlir::fastnn";
  let summary = "Tensor-level neural-network ops for the fastnn training compiler";
  let description = [{
    Ops on statically shaped tensors with value semantics. Trainable weights
    and batch-norm statistics are module-level `fastnn.parameter` symbols that
    functions read with `fastnn.param`, so passes find all model state by
    walking the symbol table. Every compute op infers its result type from its
    operands and attributes; the verifier rejects a declared type that
    disagrees, so shape errors surface at the op that caused them.
  }];
  // Elementwise ops build their scalar bodies in arith and math.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def FastNN_Layout : I32EnumAttr<"Layout", "activation memory layout", [
    I32EnumAttrCase<"NCHW", 0, "nchw">,
    I32EnumAttrCase<"NHWC", 1, "nhwc">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fastnn";
}
def FastNN_LayoutAttr : EnumAttr<FastNN_Dialect, FastNN_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def FastNN_ParamRole : I32EnumAttr<"ParamRole", "role of a model parameter", [
    I32EnumAttrCase<"Trainable", 0, "trainable">,
    I32EnumAttrCase<"Statistic", 1, "statistic">,
    I32EnumAttrCase<"Slot", 2, "slot">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fastnn";
}
def FastNN_ParamRoleAttr : EnumAttr<FastNN_Dialect, FastNN_ParamRole, "role">;

def FastNN_Optimizer : I32EnumAttr<"Optimizer",
    "optimizer update rule (TensorFlow 1.x tf.train semantics)", [
    I32EnumAttrCase<"SGD", 0, "sgd">,
    I32EnumAttrCase<"Momentum", 1, "momentum">,
    I32EnumAttrCase<"RMSProp", 2, "rmsprop">,
    I32EnumAttrCase<"Adam", 3, "adam">,
    I32EnumAttrCase<"Adagrad", 4, "adagrad">,
    I32EnumAttrCase<"Adadelta", 5, "adadelta">,
    I32EnumAttrCase<"FTRL", 6, "ftrl">,
    I32EnumAttrCase<"AdamW", 7, "adamweightdecay">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fastnn";
}
def FastNN_OptimizerAttr : EnumAttr<FastNN_Dialect, FastNN_Optimizer, "optimizer">;

def FastNN_AllReduceKind : I32EnumAttr<"AllReduceKind",
    "how an allreduce combines the workers' tensors", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fastnn";
}
def FastNN_AllReduceKindAttr : EnumAttr<FastNN_Dialect, FastNN_AllReduceKind,
                                        "allreduce_kind">;

def FastNN_PadMode : I32EnumAttr<"PadMode", "how pad fills the border", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Reflect", 1, "reflect">,
    I32EnumAttrCase<"Edge", 2, "edge">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fastnn";
}
def FastNN_PadModeAttr : EnumAttr<FastNN_Dialect, FastNN_PadMode, "pad_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def FastNN_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def FastNN_Integer : AnyTypeOf<[I1, I8, I16, I32, I64, UI8]>;
def FastNN_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def FastNN_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def FastNN_BoolTensor : StaticShapeTensorOf<[I1]>;
def FastNN_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I8, I16,
                                         I32, I64, UI8]>;

def FastNN_ElementType : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64,
                                     UI8]>;

// NaN is neither negative nor non-negative; reject it too.
def FastNN_FloatNonNegative : AttrConstraint<
    CPred<"!::llvm::cast<::mlir::FloatAttr>($_self).getValue().isNegative() && "
          "!::llvm::cast<::mlir::FloatAttr>($_self).getValue().isNaN()">,
    "whose value is non-negative">;

def FastNN_Pair : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>;
def FastNN_Quad : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<4>]>;

#endif // FASTNN_DIALECT_FASTNN_IR_FASTNNBASE_TD
