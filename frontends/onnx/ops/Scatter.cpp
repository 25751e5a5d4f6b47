//===- Scatter.cpp - ONNX ScatterND ---------------------------------------===//
//
// ScatterND with constant indices (static shapes: the indices of exported
// image models are slice positions, such as the window regions of Swin's
// shifted-window mask). All-constant operands fold at import; otherwise the
// writes are gathers of the update rows with constant indices and selects
// with constant masks, so the data and the updates get the gather's and
// the select's gradients.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// The combination of ScatterND's reduction attribute.
template <typename T>
T combine(llvm::StringRef reduction, T current, T update) {
  if (reduction == "add")
    return current + update;
  if (reduction == "mul")
    return current * update;
  if (reduction == "max")
    return std::max(current, update);
  if (reduction == "min")
    return std::min(current, update);
  return update;
}

/// data[indices[u]] = updates[u], or combined with it by the reduction
/// (add; mul from version 16; max and min from 18), with data as [P, R]:
/// P the positions the last index axis addresses (data's first k
/// dimensions), R the elements each position holds, updates as [U, R].
LogicalResult importScatterND(NodeImporter &n) {
  FailureOr<Value> data = n.input(0), updates = n.input(2);
  FailureOr<DenseElementsAttr> indicesAttr = n.constantInput(1);
  if (failed(data) || failed(updates) || failed(indicesAttr))
    return failure();
  std::string reduction =
      n.version() >= 16 ? n.stringAttr("reduction", "none") : "none";
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      (n.version() < 18 || (reduction != "max" && reduction != "min")))
    return n.error("unknown reduction '" + reduction + "'");
  auto dataType = cast<RankedTensorType>(data->getType());
  auto updatesType = cast<RankedTensorType>(updates->getType());
  auto indicesType = cast<RankedTensorType>(indicesAttr->getType());
  if (!indicesType.getElementType().isInteger())
    return n.error("indices must hold integers");
  if (indicesType.getRank() < 1)
    return n.error("indices must have rank >= 1");
  int64_t depth = indicesType.getShape().back();
  if (depth > dataType.getRank())
    return n.error("indices address " + Twine(depth) +
                   " dimensions of data of rank " + Twine(dataType.getRank()));
  SmallVector<int64_t> expected(indicesType.getShape().drop_back());
  llvm::append_range(expected, dataType.getShape().drop_front(depth));
  if (updatesType.getShape() != ArrayRef<int64_t>(expected))
    return n.error("updates must have shape indices.shape[:-1] + "
                   "data.shape[indices.shape[-1]:]");

  int64_t positions = 1, elements = 1;
  for (int64_t d = 0; d < depth; ++d)
    positions *= dataType.getDimSize(d);
  for (int64_t d = depth; d < dataType.getRank(); ++d)
    elements *= dataType.getDimSize(d);
  SmallVector<int64_t> rows;
  SmallVector<APInt> indices(indicesAttr->getValues<APInt>());
  for (size_t u = 0; u * depth < indices.size(); ++u) {
    int64_t row = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t size = dataType.getDimSize(d);
      int64_t index = indices[u * depth + d].getSExtValue();
      index += index < 0 ? size : 0;
      if (index < 0 || index >= size)
        return n.error("index " + Twine(indices[u * depth + d].getSExtValue()) +
                       " is out of range for dimension " + Twine(d) +
                       " of size " + Twine(size));
      row = row * size + index;
    }
    rows.push_back(row);
  }

  DenseElementsAttr dataConstant, updatesConstant;
  if (matchPattern(*data, m_Constant(&dataConstant)) &&
      matchPattern(*updates, m_Constant(&updatesConstant))) {
    SmallVector<Attribute> values(dataConstant.getValues<Attribute>());
    SmallVector<Attribute> written(updatesConstant.getValues<Attribute>());
    for (auto [u, row] : llvm::enumerate(rows))
      for (int64_t e = 0; e < elements; ++e) {
        Attribute &target = values[row * elements + e];
        Attribute update = written[u * elements + e];
        if (auto f = dyn_cast<FloatAttr>(target))
          target = FloatAttr::get(
              f.getType(), combine(reduction, f.getValueAsDouble(),
                                   cast<FloatAttr>(update).getValueAsDouble()));
        else
          target = IntegerAttr::get(
              cast<IntegerAttr>(target).getType(),
              combine(reduction, cast<IntegerAttr>(target).getInt(),
                      cast<IntegerAttr>(update).getInt()));
      }
    n.setOutput(0,
                ConstantOp::create(n.builder(), n.getLoc(),
                                   DenseElementsAttr::get(dataType, values)));
    return success();
  }

  // Rounds in which each position is written at most once, in the order of
  // the updates (the r-th write of every position in round r). Each round
  // gathers, for every position, the update row that writes it (a constant
  // index; row 0 where none does), and selects the combination with it
  // where a row is written. Gradients flow through the gathers and selects.
  SmallVector<SmallVector<int64_t>> rounds;
  SmallVector<int64_t> writes(positions, 0);
  for (auto [u, row] : llvm::enumerate(rows)) {
    int64_t round = writes[row]++;
    if (round == static_cast<int64_t>(rounds.size()))
      rounds.emplace_back(positions, -1);
    rounds[round][row] = u;
  }
  OpBuilder &b = n.builder();
  Value result = n.reshape(*data, {positions, elements});
  Value flatUpdates =
      n.reshape(*updates, {static_cast<int64_t>(rows.size()), elements});
  for (ArrayRef<int64_t> round : rounds) {
    SmallVector<int64_t> source;
    SmallVector<bool> written;
    for (int64_t u : round) {
      source.push_back(std::max<int64_t>(u, 0));
      written.push_back(u >= 0);
    }
    Value sourceRows = ConstantOp::create(
        b, n.getLoc(),
        DenseElementsAttr::get(
            RankedTensorType::get({positions}, b.getI64Type()),
            ArrayRef<int64_t>(source)));
    Value mask = ConstantOp::create(
        b, n.getLoc(),
        DenseElementsAttr::get(
            RankedTensorType::get({positions, 1}, b.getI1Type()),
            ArrayRef<bool>(written)));
    FailureOr<Value> gathered =
        n.create<GatherOp>(ValueRange{flatUpdates, sourceRows},
                           {namedAttr(n, "axis", b.getI64IntegerAttr(0))});
    if (failed(gathered))
      return failure();
    FailureOr<Value> combined = *gathered;
    if (reduction == "add")
      combined = n.create<AddOp>(ValueRange{result, *gathered});
    else if (reduction == "mul")
      combined = n.create<MulOp>(ValueRange{result, *gathered});
    else if (reduction == "max")
      combined = n.create<MaxOp>(ValueRange{result, *gathered});
    else if (reduction == "min")
      combined = n.create<MinOp>(ValueRange{result, *gathered});
    if (failed(combined))
      return failure();
    FailureOr<Value> selected =
        n.create<SelectOp>(ValueRange{mask, *combined, result});
    if (failed(selected))
      return failure();
    result = *selected;
  }
  n.setOutput(0, n.reshape(result, dataType.getShape()));
  return success();
}

} // namespace

std::vector<OpRecord> scatterOpRecords() {
  return {
      {"ScatterND", importScatterND, {13, 16, 18}, {1}},
  };
}

} // namespace fastnn::onnx_import
