//===- InferMain.cpp - main() of infer.bin --------------------------------===//
//
// infer.bin [--input NAME=FILE.npy]... [--output-dir DIR] [--repeat N]
//           [--seed S] [--weights FILE | --init-from-onnx FILE]
//           [--profile FILE]
//
// Runs a model compiled with `fastnnc --mode=infer`: reads each input from a
// .npy file (inputs not given are filled with seeded uniform noise, which is
// what benchmarks want), runs the model, writes every output as
// DIR/<name>.npy and prints the time per run. bfloat16 tensors travel as
// uint16 arrays of their bits, since numpy has no bfloat16. A model compiled
// with --weights=external loads its weights from infer.bin.weights beside it
// (or --weights FILE); --init-from-onnx takes them from an ONNX model's
// initializers instead, as train.bin's init_from_onnx. --profile traces one
// more run after the timed ones (so that tracing does not slow them) and
// writes its timeline (Trace Event Format, as train.bin's
// profile_every_n_iters) and prints where its time went, by op kind.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"
#include "fastnn/runtime/npy.h"
#include "fastnn/trainer/InitialWeights.h"
#include "fastnn/trainer/OnnxInitializers.h"
#include "fastnn/trainer/Timeline.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using fastnn::runtime::NpyArray;
using fastnn::runtime::NpyType;
using fastnn::runtime::numpyShapeText;
using fastnn::runtime::TensorRecord;

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "infer.bin: error: %s\n", message.c_str());
  std::exit(1);
}

/// The .npy element type of a model tensor; false for types .npy files of
/// infer.bin do not carry.
bool npyTypeOf(int64_t dtype, NpyType &type) {
  switch (dtype) {
  case FNN_F32:
    type = NpyType::F32;
    return true;
  case FNN_F64:
    type = NpyType::F64;
    return true;
  case FNN_F16:
    type = NpyType::F16;
    return true;
  case FNN_BF16:
    // numpy has no bfloat16; the raw bits travel as uint16.
    type = NpyType::U16;
    return true;
  case FNN_I64:
    type = NpyType::I64;
    return true;
  case FNN_I32:
    type = NpyType::I32;
    return true;
  case FNN_I16:
    type = NpyType::I16;
    return true;
  case FNN_I8:
    type = NpyType::I8;
    return true;
  case FNN_U8:
    type = NpyType::U8;
    return true;
  case FNN_BOOL:
    type = NpyType::Bool;
    return true;
  default:
    return false;
  }
}

/// Output names become file names; ONNX names may hold '/' or ':'.
std::string fileNameFor(const std::string &name) {
  std::string file;
  for (char c : name)
    file += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
             c == '-' || c == '.')
                ? c
                : '_';
  return file;
}

void printUsage(const std::vector<TensorRecord> &records) {
  std::printf("usage: infer.bin [--input NAME=FILE.npy]... [--output-dir DIR] "
              "[--repeat N] [--seed S]\n                 [--weights FILE | "
              "--init-from-onnx FILE] [--profile FILE]\n\n"
              "Inputs not given are filled with uniform noise in [-1, 1) "
              "from the seed. --init-from-onnx takes the weights from the "
              "initializers\nof an ONNX model of the same parameters, "
              "matched by name. --profile writes the timeline of one more "
              "run\nto FILE (chrome://tracing, ui.perfetto.dev) and prints "
              "its time by op kind.\n%s",
              fnn_model_external_weights
                  ? "The weights come from FILE, by default this "
                    "executable's path plus .weights (fastnnc "
                    "--weights=external wrote them there).\n"
                  : "");
  for (const TensorRecord &record : records)
    std::printf("  %s %s: shape %s\n",
                record.kind == FNN_IO_INPUT ? "input " : "output",
                record.name.c_str(), numpyShapeText(record.shape).c_str());
}

int64_t parseCount(const char *flag, const char *text) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 0)
    fail(std::string(flag) + " expects a non-negative integer, got '" + text +
         "'");
  return value;
}

/// Runs the model once more with its spans recorded, writes the timeline
/// to \p path and prints the time by op kind.
void profileOneRun(void *arena, fnn_device *device, const std::string &path) {
  fnn_trace_enable(1);
  int64_t start = fnn_trace_now_ns();
  fnn_model_run(arena);
  fnn_device_synchronize(device);
  int64_t end = fnn_trace_now_ns();
  fnn_trace_enable(0);
  std::vector<fastnn::trainer::TimelineSpan> spans = {
      {"run", "step", 0, start, end}};
  for (const fnn_trace_span &kernel : fastnn::trainer::collectKernelSpans())
    spans.push_back({kernel.name, "kernel", 1, kernel.start_ns, kernel.end_ns});
  if (fastnn::data::Status status = fastnn::trainer::writeChromeTrace(
          path, "infer.bin run", {"infer.bin", "compiled model"}, spans);
      !status.ok())
    fail("--profile " + path + ": " + status.message());
  std::vector<fastnn::trainer::TimelineSpan> opSpans(spans.begin() + 1,
                                                     spans.end());
  std::printf("infer.bin: profiled run: %.3f ms, %zu op spans, timeline %s\n%s",
              static_cast<double>(end - start) / 1e6, opSpans.size(),
              path.c_str(),
              fastnn::trainer::spanSummary(opSpans, end - start).c_str());
}

} // namespace

int main(int argc, char **argv) {
  std::vector<TensorRecord> records =
      fastnn::runtime::readTensorRecords(fnn_model_io, fnn_model_io_names);
  std::map<std::string, std::string> inputFiles;
  std::string outputDir = ".";
  int64_t repeat = 1, seed = 0;
  std::string weightsFile, onnxFile, profileFile;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      size_t eq = arg.find('=');
      if (eq != std::string::npos)
        return arg.substr(eq + 1);
      if (i + 1 >= argc)
        fail(arg + " expects a value");
      return argv[++i];
    };
    std::string flag = arg.substr(0, arg.find('='));
    if (arg == "--help" || arg == "-h") {
      printUsage(records);
      return 0;
    } else if (flag == "--input") {
      std::string spec = value();
      size_t eq = spec.find('=');
      if (eq == std::string::npos)
        fail("--input expects NAME=FILE.npy, got '" + spec + "'");
      inputFiles[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (flag == "--output-dir") {
      outputDir = value();
    } else if (flag == "--repeat") {
      repeat = std::max<int64_t>(1, parseCount("--repeat", value().c_str()));
    } else if (flag == "--seed") {
      seed = parseCount("--seed", value().c_str());
    } else if (flag == "--weights") {
      weightsFile = value();
    } else if (flag == "--init-from-onnx") {
      onnxFile = value();
    } else if (flag == "--profile") {
      profileFile = value();
    } else {
      fail("unknown argument '" + arg + "' (see --help)");
    }
  }
  std::error_code created;
  std::filesystem::create_directories(outputDir, created);
  if (created)
    fail("--output-dir " + outputDir + ": " + created.message());
  for (const auto &[name, file] : inputFiles) {
    bool known = false;
    for (const TensorRecord &record : records)
      known |= record.kind == FNN_IO_INPUT && record.name == name;
    if (!known)
      fail("--input " + name + "=" + file +
           ": the model has no input of that name (see --help)");
  }

  std::string deviceError;
  fnn_device *device = fastnn::runtime::createModelDevice(0, deviceError);
  if (!device)
    fail(deviceError);
  auto *arena = static_cast<unsigned char *>(
      fnn_device_alloc(device, static_cast<size_t>(fnn_model_arena_bytes)));
  if (!arena)
    fail("cannot allocate the " + std::to_string(fnn_model_arena_bytes) +
         "-byte arena");
  if (fnn_model_init(device, arena) != 0)
    fail(std::string("cannot initialise the model: ") + fnn_last_error());
  const fastnn::runtime::ArenaAccess modelArena(device, arena);
  if (!weightsFile.empty() && !onnxFile.empty())
    fail("--weights and --init-from-onnx both give the weights; give one");
  const std::vector<TensorRecord> state = fastnn::runtime::readTensorRecords(
      fnn_model_state, fnn_model_state_names);
  if (!onnxFile.empty()) {
    int64_t restored = 0;
    std::string warning;
    if (fastnn::data::Status status = fastnn::trainer::loadOnnxWeights(
            onnxFile, "--init-from-onnx " + onnxFile, state, modelArena,
            restored, warning);
        !status.ok())
      fail("--init-from-onnx: " + status.message());
    if (!warning.empty())
      std::printf("infer.bin: warning: %s\n", warning.c_str());
  } else if (fnn_model_external_weights || !weightsFile.empty()) {
    if (fastnn::data::Status status = fastnn::trainer::loadWeightsFile(
            fastnn::trainer::weightsFilePath(weightsFile), state, modelArena,
            "--weights FILE");
        !status.ok())
      fail(status.message());
  }

  std::mt19937_64 random(static_cast<uint64_t>(seed));
  for (const TensorRecord &record : records) {
    if (record.kind != FNN_IO_INPUT)
      continue;
    NpyType type;
    if (!npyTypeOf(record.dtype, type))
      fail("input '" + record.name +
           "' has an element type .npy files "
           "cannot hold here");
    NpyArray array;
    auto it = inputFiles.find(record.name);
    if (it != inputFiles.end()) {
      auto status = fastnn::runtime::readNpy(it->second, array);
      if (!status.ok())
        fail(status.message());
      if (array.Type != type || array.Shape != record.shape)
        fail(it->second + ": input '" + record.name + "' needs " +
             fastnn::runtime::npyTypeDescr(type) + " of shape " +
             numpyShapeText(record.shape) + ", the file holds " +
             fastnn::runtime::npyTypeDescr(array.Type) + " of shape " +
             numpyShapeText(array.Shape));
    } else {
      array.Type = type;
      array.Shape = record.shape;
      array.Data.assign(
          record.numElements() * fastnn::runtime::npyTypeSize(type), 0);
      if (type == NpyType::F32) {
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        auto *values = reinterpret_cast<float *>(array.Data.data());
        for (int64_t e = 0; e < record.numElements(); ++e)
          values[e] = uniform(random);
      }
    }
    modelArena.write(record.offset, array.Data.data(), array.Data.size());
  }

  // One run to warm caches and thread pools, then the timed ones.
  fnn_model_run(arena);
  fnn_device_synchronize(device);
  auto start = std::chrono::steady_clock::now();
  for (int64_t r = 0; r < repeat; ++r)
    fnn_model_run(arena);
  fnn_device_synchronize(device);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  int64_t batch = 1;
  for (const TensorRecord &record : records)
    if (record.kind == FNN_IO_INPUT && !record.shape.empty()) {
      batch = record.shape[0];
      break;
    }
  std::printf("infer.bin: %lld runs, %.3f ms per run, %.1f images/s (batch "
              "%lld)\n",
              static_cast<long long>(repeat), seconds * 1e3 / repeat,
              batch * repeat / seconds, static_cast<long long>(batch));
  if (!profileFile.empty())
    profileOneRun(arena, device, profileFile);

  for (const TensorRecord &record : records) {
    if (record.kind != FNN_IO_OUTPUT)
      continue;
    NpyType type;
    if (!npyTypeOf(record.dtype, type))
      fail("output '" + record.name +
           "' has an element type .npy files "
           "cannot hold here");
    std::vector<unsigned char> data(record.numElements() *
                                    fastnn::runtime::npyTypeSize(type));
    modelArena.read(record.offset, data.data(), data.size());
    std::string path = outputDir + "/" + fileNameFor(record.name) + ".npy";
    auto status =
        fastnn::runtime::writeNpy(path, type, record.shape, data.data());
    if (!status.ok())
      fail(status.message());
  }
  fnn_model_release();
  fnn_device_free(device, arena);
  fnn_device_destroy(device);
  return 0;
}
