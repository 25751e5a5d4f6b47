//===- OperatorVersions.cpp - the ONNX operators' version history ---------===//
//
// Which version of an operator a model's opset selects, from the table
// OperatorVersions.inc generated from the pinned onnx release's schemas
// (scripts/generate_onnx_operator_versions.py). The linked libonnx is not
// asked: Debian's 1.12 knows opsets up to 17 only.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

namespace fastnn::onnx_import {

namespace {

#define FASTNN_ONNX_NEWEST_OPSET(opset) constexpr int64_t kNewestOpset = opset;
#define FASTNN_ONNX_OPERATOR(name, ...)
#include "OperatorVersions.inc"
#undef FASTNN_ONNX_OPERATOR
#undef FASTNN_ONNX_NEWEST_OPSET

/// Each operator's since-versions, ascending.
const llvm::StringMap<llvm::SmallVector<int64_t, 8>> &versionHistory() {
  static const llvm::StringMap<llvm::SmallVector<int64_t, 8>> table = [] {
    llvm::StringMap<llvm::SmallVector<int64_t, 8>> history;
#define FASTNN_ONNX_NEWEST_OPSET(opset)
#define FASTNN_ONNX_OPERATOR(name, ...) history[name] = {__VA_ARGS__};
#include "OperatorVersions.inc"
#undef FASTNN_ONNX_OPERATOR
#undef FASTNN_ONNX_NEWEST_OPSET
    return history;
  }();
  return table;
}

} // namespace

int64_t newestOpset() { return kNewestOpset; }

int64_t selectedVersion(llvm::StringRef opType, int64_t opset) {
  const auto &history = versionHistory();
  auto it = history.find(opType);
  if (it == history.end())
    return 0;
  int64_t selected = 0;
  for (int64_t version : it->second)
    if (version <= opset)
      selected = version;
  return selected;
}

bool isOperatorVersion(llvm::StringRef opType, int64_t version) {
  const auto &history = versionHistory();
  auto it = history.find(opType);
  return it != history.end() && llvm::is_contained(it->second, version);
}

} // namespace fastnn::onnx_import
