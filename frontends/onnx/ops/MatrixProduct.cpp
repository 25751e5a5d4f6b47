//===- MatrixProduct.cpp - ONNX Gemm and MatMul ---------------------------===//
//
// Matrix products: Gemm as a matmul scaled and biased, MatMul with numpy's
// promotion of vectors and stacks.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

LogicalResult importGemm(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (cast<RankedTensorType>(a->getType()).getRank() != 2 ||
      cast<RankedTensorType>(b->getType()).getRank() != 2)
    return n.error("expects 2-D A and B");
  SmallVector<NamedAttribute> attrs;
  if (n.intAttr("transA", 0))
    attrs.push_back(namedAttr(n, "transpose_a", n.builder().getUnitAttr()));
  if (n.intAttr("transB", 0))
    attrs.push_back(namedAttr(n, "transpose_b", n.builder().getUnitAttr()));
  double alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  FailureOr<Value> product = n.create<MatMulOp>(ValueRange{*a, *b}, attrs);
  if (failed(product))
    return failure();
  Type elementType = cast<RankedTensorType>(a->getType()).getElementType();
  if (alpha != 1.0)
    product = n.create<MulOp>(
        ValueRange{*product, n.scalarConstant(elementType, alpha)});
  if (failed(product) || !n.hasInput(2))
    return defineResult(n, product);
  FailureOr<Value> c = n.input(2);
  if (failed(c))
    return failure();
  if (beta != 1.0)
    c = n.create<MulOp>(ValueRange{*c, n.scalarConstant(elementType, beta)});
  if (failed(c))
    return failure();
  return defineResult(n, n.create<AddOp>(ValueRange{*product, *c}));
}

LogicalResult importMatMul(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  auto aType = cast<RankedTensorType>(a->getType());
  auto bType = cast<RankedTensorType>(b->getType());
  // numpy.matmul promotes 1-D operands to matrices and drops the added
  // dimension from the result.
  bool vectorA = aType.getRank() == 1, vectorB = bType.getRank() == 1;
  if (vectorA)
    a = n.reshape(*a, {1, aType.getDimSize(0)});
  if (vectorB)
    b = n.reshape(*b, {bType.getDimSize(0), 1});
  // A stack of matrices times one matrix (a linear layer over channels-last
  // activations, as ConvNeXt's) is one 2-D product over the stacked rows:
  // one GEMM, and the product the matmul gradient differentiates.
  if (aType.getRank() > 2 && bType.getRank() == 2) {
    ArrayRef<int64_t> shape = aType.getShape();
    int64_t rows = 1;
    for (int64_t dim : shape.drop_back())
      rows *= dim;
    FailureOr<Value> product =
        n.create<MatMulOp>(ValueRange{n.reshape(*a, {rows, shape.back()}), *b});
    if (failed(product))
      return failure();
    SmallVector<int64_t> resultShape(shape);
    resultShape.back() = bType.getDimSize(1);
    return defineResult(n, n.reshape(*product, resultShape));
  }
  FailureOr<Value> product = n.create<MatMulOp>(ValueRange{*a, *b});
  if (failed(product) || (!vectorA && !vectorB))
    return defineResult(n, product);
  auto type = cast<RankedTensorType>(product->getType());
  SmallVector<int64_t> shape(type.getShape());
  if (vectorB)
    shape.pop_back();
  if (vectorA)
    shape.erase(shape.end() - (vectorB ? 1 : 2));
  return defineResult(n, n.reshape(*product, shape));
}

} // namespace

std::vector<OpRecord> matrixProductOpRecords() {
  return {
      {"Gemm", importGemm, {13}},
      {"MatMul", importMatMul, {13}},
  };
}

} // namespace fastnn::onnx_import
