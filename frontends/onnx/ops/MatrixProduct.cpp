//===- MatrixProduct.cpp - ONNX Gemm and MatMul ---------------------------===//
//
// Matrix products: Gemm as a matmul scaled and biased, MatMul with numpy's
// promotion of vectors and stacks, Einsum's contractions as matmuls.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <algorithm>
#include <optional>

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

/// One operand's subscripts as label numbers: letters 0 to 51, the
/// dimensions an ellipsis stands for 52 and up, right-aligned across the
/// operands (numpy broadcasts them from the right).
using Labels = SmallVector<int64_t>;

constexpr int64_t kEllipsisLabel = 52;

FailureOr<Labels> parseSubscripts(NodeImporter &n, StringRef term,
                                  std::optional<int64_t> rank,
                                  int64_t ellipsisRank) {
  Labels labels;
  size_t dots = term.find("...");
  StringRef before = term.substr(0, dots);
  StringRef after = dots == StringRef::npos ? "" : term.substr(dots + 3);
  auto append = [&](StringRef letters) -> LogicalResult {
    for (char c : letters) {
      if (c >= 'a' && c <= 'z')
        labels.push_back(c - 'a');
      else if (c >= 'A' && c <= 'Z')
        labels.push_back(26 + c - 'A');
      else
        return n.error("equation has an invalid subscript '" + Twine(c) + "'");
    }
    return success();
  };
  if (failed(append(before)))
    return failure();
  if (dots != StringRef::npos) {
    int64_t letters = before.size() + after.size();
    int64_t covered = rank ? *rank - letters : ellipsisRank;
    if (covered < 0)
      return n.error("equation term '" + term +
                     "' has more subscripts than "
                     "its operand has dimensions");
    for (int64_t d = ellipsisRank - covered; d < ellipsisRank; ++d)
      labels.push_back(kEllipsisLabel + d);
  }
  if (failed(append(after)))
    return failure();
  if (rank && static_cast<int64_t>(labels.size()) != *rank)
    return n.error("equation term '" + term + "' has " + Twine(labels.size()) +
                   " subscripts for an operand of rank " + Twine(*rank));
  return labels;
}

/// The positions in `labels` of the labels of `groups`, in order: the
/// permutation that brings an operand into that order.
SmallVector<int64_t> permutation(const Labels &labels,
                                 ArrayRef<Labels> groups) {
  SmallVector<int64_t> perm;
  for (const Labels &group : groups)
    for (int64_t label : group)
      perm.push_back(llvm::find(labels, label) - labels.begin());
  return perm;
}

FailureOr<Value> transposeTo(NodeImporter &n, Value value,
                             ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return value;
  return n.create<TransposeOp>(
      value, {namedAttr(n, "permutation", i64Array(n, perm))});
}

/// Sums `value` over the labels no other operand and not the output name
/// (einsum's "ij->i"); removes them from `labels`.
FailureOr<Value> sumUnshared(NodeImporter &n, Value value, Labels &labels,
                             ArrayRef<int64_t> elsewhere) {
  SmallVector<int64_t> axes;
  Labels kept;
  for (auto [d, label] : llvm::enumerate(labels)) {
    if (llvm::is_contained(elsewhere, label))
      kept.push_back(label);
    else
      axes.push_back(d);
  }
  if (axes.empty())
    return value;
  labels = kept;
  return n.create<ReduceSumOp>(value,
                               {namedAttr(n, "axes", i64Array(n, axes))});
}

/// The contractions attention and MLP layers write ("bhqd,bhkd->bhqk",
/// "...ij,...jk->...ik") as one batched matmul between transposes and
/// reshapes: a to [batch..., free of a, contracted], b to [batch...,
/// contracted, free of b], the product reshaped and transposed to the
/// output's order. Labels in one operand only and not in the output are
/// summed first; one operand is a sum and a transpose. Repeated subscripts
/// in a term (diagonals, traces) and more than two operands are rejected.
LogicalResult importEinsum(NodeImporter &n) {
  std::string equation = n.stringAttr("equation", "");
  llvm::erase(equation, ' ');
  StringRef text(equation);
  if (n.numInputs() < 1 || n.numInputs() > 2)
    return n.error("einsum of " + Twine(n.numInputs()) +
                   " operands is not supported (one or two)");
  size_t arrow = text.find("->");
  SmallVector<StringRef, 2> terms;
  text.substr(0, arrow).split(terms, ',');
  if (terms.size() != n.numInputs())
    return n.error("equation has " + Twine(terms.size()) + " terms for " +
                   Twine(n.numInputs()) + " inputs");
  SmallVector<Value, 2> values;
  int64_t ellipsisRank = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    FailureOr<Value> value = n.input(i);
    if (failed(value))
      return failure();
    values.push_back(*value);
    int64_t rank = cast<RankedTensorType>(value->getType()).getRank();
    int64_t letters = term.size() - (term.contains("...") ? 3 : 0);
    if (term.contains("..."))
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  SmallVector<Labels, 2> inputs;
  for (auto [term, value] : llvm::zip(terms, values)) {
    FailureOr<Labels> labels = parseSubscripts(
        n, term, cast<RankedTensorType>(value.getType()).getRank(),
        ellipsisRank);
    if (failed(labels))
      return failure();
    for (auto [i, label] : llvm::enumerate(*labels))
      if (llvm::is_contained(ArrayRef(*labels).drop_front(i + 1), label))
        return n.error("repeated subscripts in '" + term +
                       "' (diagonals) are not supported");
    inputs.push_back(*labels);
  }
  Labels output;
  if (arrow != StringRef::npos) {
    FailureOr<Labels> labels =
        parseSubscripts(n, text.substr(arrow + 2), std::nullopt, ellipsisRank);
    if (failed(labels))
      return failure();
    output = *labels;
  } else {
    // Implicit output: the ellipsis, then the labels used once, in order.
    for (int64_t d = 0; d < ellipsisRank; ++d)
      output.push_back(kEllipsisLabel + d);
    for (int64_t label = 0; label < kEllipsisLabel; ++label)
      if (llvm::count(inputs.front(), label) +
              (inputs.size() > 1 ? llvm::count(inputs.back(), label) : 0) ==
          1)
        output.push_back(label);
  }
  for (size_t i = 0; i < output.size(); ++i) {
    int64_t label = output[i];
    if (llvm::is_contained(ArrayRef(output).drop_front(i + 1), label))
      return n.error("equation's output repeats a subscript");
    if (llvm::none_of(inputs, [&](const Labels &l) {
          return llvm::is_contained(l, label);
        }))
      return n.error("equation's output has a subscript no input has");
  }

  for (size_t i = 0; i < inputs.size(); ++i) {
    Labels elsewhere = output;
    if (inputs.size() > 1)
      llvm::append_range(elsewhere, inputs[1 - i]);
    FailureOr<Value> summed = sumUnshared(n, values[i], inputs[i], elsewhere);
    if (failed(summed))
      return failure();
    values[i] = *summed;
  }
  Labels resultLabels = inputs.front();
  Value result = values.front();
  if (inputs.size() == 2) {
    Labels &a = inputs[0], &b = inputs[1];
    auto aType = cast<RankedTensorType>(values[0].getType());
    auto bType = cast<RankedTensorType>(values[1].getType());
    auto dimOf = [](RankedTensorType type, const Labels &labels,
                    int64_t label) {
      return type.getDimSize(llvm::find(labels, label) - labels.begin());
    };
    Labels batch, contracted, freeA, freeB;
    for (int64_t label : output)
      if (llvm::is_contained(a, label) && llvm::is_contained(b, label))
        batch.push_back(label);
    for (int64_t label : a) {
      if (!llvm::is_contained(b, label))
        freeA.push_back(label);
      else if (!llvm::is_contained(output, label))
        contracted.push_back(label);
    }
    for (int64_t label : b)
      if (!llvm::is_contained(a, label))
        freeB.push_back(label);
    SmallVector<int64_t> shapeA, shapeB, resultShape;
    int64_t m = 1, k = 1, columns = 1;
    for (int64_t label : batch) {
      shapeA.push_back(dimOf(aType, a, label));
      shapeB.push_back(dimOf(bType, b, label));
      resultShape.push_back(std::max(shapeA.back(), shapeB.back()));
    }
    for (int64_t label : freeA) {
      m *= dimOf(aType, a, label);
      resultShape.push_back(dimOf(aType, a, label));
    }
    for (int64_t label : contracted) {
      if (dimOf(aType, a, label) != dimOf(bType, b, label))
        return n.error("contracted dimensions differ in size: " +
                       Twine(dimOf(aType, a, label)) + " vs " +
                       Twine(dimOf(bType, b, label)));
      k *= dimOf(aType, a, label);
    }
    for (int64_t label : freeB) {
      columns *= dimOf(bType, b, label);
      resultShape.push_back(dimOf(bType, b, label));
    }
    FailureOr<Value> left =
        transposeTo(n, values[0], permutation(a, {batch, freeA, contracted}));
    FailureOr<Value> right =
        transposeTo(n, values[1], permutation(b, {batch, contracted, freeB}));
    if (failed(left) || failed(right))
      return failure();
    shapeA.append({m, k});
    shapeB.append({k, columns});
    FailureOr<Value> product = n.create<MatMulOp>(
        ValueRange{n.reshape(*left, shapeA), n.reshape(*right, shapeB)});
    if (failed(product))
      return failure();
    result = n.reshape(*product, resultShape);
    resultLabels = batch;
    llvm::append_range(resultLabels, freeA);
    llvm::append_range(resultLabels, freeB);
  }
  return defineResult(
      n, transposeTo(n, result, permutation(resultLabels, {output})));
}

} // namespace

std::vector<OpRecord> matrixProductOpRecords() {
  return {
      // Einsum 28 adds unsigned element types.
      {"Einsum", importEinsum, {12, 28}},
      {"Gemm", importGemm, {13}},
      {"MatMul", importMatMul, {13}},
  };
}

} // namespace fastnn::onnx_import
