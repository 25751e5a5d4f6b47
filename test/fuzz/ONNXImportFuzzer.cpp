//===- ONNXImportFuzzer.cpp - libFuzzer target for the ONNX importer ------===//
//
// Writes the input as model.onnx into a directory of its own, beside a
// small weights.bin for external data to name, and imports it as fastnnc
// does for training (protobuf parse, ONNX checker, opset conversion, shape
// inference, the importer and MLIR verification, the export template). The
// batch size is applied to inputs of odd length, as --batch_size would.
// Errors go to a handler that drops them: only crashes, hangs and
// allocations out of proportion to the input count.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Frontends/ONNX/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string writeFile(const std::string &Path, const void *Data, size_t Size) {
  FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return "";
  std::fwrite(Data, 1, Size, F);
  std::fclose(F);
  return Path;
}

/// The fuzzer's directory, removed when the process exits.
class ModelDir {
public:
  ModelDir() : Path("/tmp/fastnn-onnx-fuzz-" + std::to_string(getpid())) {
    (void)mkdir(Path.c_str(), 0700);
    static const float Weights[64] = {1.0f};
    writeFile(Path + "/weights.bin", Weights, sizeof(Weights));
  }
  ~ModelDir() {
    std::remove((Path + "/weights.bin").c_str());
    std::remove((Path + "/model.onnx").c_str());
    rmdir(Path.c_str());
  }
  const std::string Path;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const ModelDir Dir;
  std::string Path = writeFile(Dir.Path + "/model.onnx", Data, Size);
  if (Path.empty())
    return 0;
  mlir::MLIRContext Context;
  mlir::ScopedDiagnosticHandler Quiet(
      &Context, [](mlir::Diagnostic &) { return mlir::success(); });
  fastnn::ONNXImportOptions Options;
  Options.batchSize = Size % 2 ? 2 : 0;
  std::string ExportTemplate;
  Options.exportTemplate = &ExportTemplate;
  (void)fastnn::importONNXFile(Context, Path, Options);
  return 0;
}
