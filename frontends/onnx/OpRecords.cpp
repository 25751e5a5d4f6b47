//===- OpRecords.cpp - the table of ONNX operator records -----------------===//
//
// The one table of the ONNX operators fastnn imports, assembled from the
// records each operator family in ops/ lists. Adding an operator adds its
// record to its family's list (docs/adding-an-operator.md).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"

namespace fastnn::onnx_import {

const OpRecord *lookupOpRecord(llvm::StringRef opType) {
  static const llvm::StringMap<OpRecord> table = [] {
    llvm::StringMap<OpRecord> records;
    for (auto family :
         {convolutionOpRecords, normalizationOpRecords, matrixProductOpRecords,
          elementwiseOpRecords, randomOpRecords, reductionOpRecords,
          resamplingOpRecords, shapeOpRecords, scatterOpRecords,
          constantOpRecords})
      for (OpRecord &record : family()) {
        for (int64_t version : record.versions)
          if (!isOperatorVersion(record.opType, version))
            llvm::report_fatal_error(
                "the record of ONNX operator '" + record.opType +
                "' lists version " + llvm::Twine(version) +
                ", which OperatorVersions.inc does not define");
        if (!records.try_emplace(record.opType, std::move(record)).second)
          llvm::report_fatal_error("two records for ONNX operator '" +
                                   record.opType + "'");
      }
    return records;
  }();
  auto it = table.find(opType);
  return it == table.end() ? nullptr : &it->second;
}

} // namespace fastnn::onnx_import
