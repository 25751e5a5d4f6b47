//===- StepMain.cpp - main() that runs given batches through a train step -===//
//
// step-runner --images IMAGES.npy --labels LABELS.npy --learning-rate LR
//             [--eval-images IMAGES.npy --eval-labels LABELS.npy]
//             [--step N] [--trainables-out DIR]
//
// For the parity tests: IMAGES holds S batches ([S, N, ...], float32) and
// LABELS their classes ([S, N], int64); the compiled training step runs on
// each in turn and the loss, top-1 and top-5 of every step are printed at
// full precision, one line each. Batch s runs as step s + 1, or every batch
// as step N with --step (dropout masks depend on the step). With --eval-*, the
// trained parameters and statistics are then copied by name into the evaluation
// step (fnn_eval_*), which runs on each of those batches and prints one line
// per sample: "eval BATCH SAMPLE LOSS TOP1 TOP5". With --trainables-out, every
// trainable parameter is written after the steps as DIR/NAME.npy (the gradient
// checks of test/gradcheck read the SGD update from them).
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/model.h"
#include "fastnn/runtime/npy.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using fastnn::runtime::ArenaAccess;
using fastnn::runtime::findTensorRecord;
using fastnn::runtime::NpyArray;
using fastnn::runtime::TensorRecord;

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "step-runner: error: %s\n", message.c_str());
  std::exit(1);
}

const TensorRecord &require(const std::vector<TensorRecord> &records,
                            int64_t kind, const char *name) {
  const TensorRecord *record = findTensorRecord(records, kind, name);
  if (!record)
    fail(std::string("the model has no ") + name + " (not a training step?)");
  return *record;
}

/// S batches of images and labels matching the step's inputs.
int64_t countBatches(const NpyArray &images, const NpyArray &labels,
                     const TensorRecord &imagesIn,
                     const TensorRecord &labelsIn) {
  int64_t batches = images.Shape.empty() ? 0 : images.Shape[0];
  if (images.Data.size() != batches * imagesIn.numElements() * sizeof(float) ||
      labels.Data.size() != batches * labelsIn.numElements() * sizeof(int64_t))
    fail("the batches do not match the model's images and labels");
  return batches;
}

/// Copies the trained state into the evaluation arena by name, as train.bin
/// does before evaluating; every evaluation state record must have a
/// trainable or statistic record of the same name and shape.
void copyStateForEval(const ArenaAccess &trainArena,
                      const ArenaAccess &evalArena) {
  std::vector<TensorRecord> trained = fastnn::runtime::readTensorRecords(
      fnn_model_state, fnn_model_state_names);
  for (const TensorRecord &target : fastnn::runtime::readTensorRecords(
           fnn_eval_state, fnn_eval_state_names)) {
    const TensorRecord *source = nullptr;
    for (int64_t role : {FNN_STATE_TRAINABLE, FNN_STATE_STATISTIC})
      if (!source)
        source = findTensorRecord(trained, role, target.name);
    if (!source || source->shape != target.shape ||
        source->dtype != target.dtype)
      fail("the evaluation step's state '" + target.name +
           "' has no trained counterpart of its shape");
    std::vector<unsigned char> staging(static_cast<size_t>(target.bytes()));
    trainArena.read(source->offset, staging.data(), staging.size());
    evalArena.write(target.offset, staging.data(), staging.size());
  }
}

/// Writes every trainable parameter (float32) as DIR/NAME.npy.
void saveTrainables(const ArenaAccess &arena, const std::string &dir) {
  for (const TensorRecord &record : fastnn::runtime::readTensorRecords(
           fnn_model_state, fnn_model_state_names)) {
    if (record.kind != FNN_STATE_TRAINABLE)
      continue;
    if (record.dtype != FNN_F32 || record.name.find('/') != std::string::npos)
      fail("cannot save the trainable '" + record.name +
           "': only float32 parameters named like files can be saved");
    std::vector<float> values(record.numElements());
    arena.read(record.offset, values.data(), values.size() * sizeof(float));
    if (auto status = fastnn::runtime::writeNpy(
            dir + "/" + record.name + ".npy", fastnn::runtime::NpyType::F32,
            record.shape, values.data());
        !status.ok())
      fail(status.message());
  }
}

void evaluate(const ArenaAccess &trainArena, const std::string &imagesPath,
              const std::string &labelsPath) {
  NpyArray images, labels;
  for (auto [path, array] :
       {std::pair{&imagesPath, &images}, std::pair{&labelsPath, &labels}})
    if (auto status = fastnn::runtime::readNpy(*path, *array); !status.ok())
      fail(status.message());
  std::vector<TensorRecord> io =
      fastnn::runtime::readTensorRecords(fnn_eval_io, fnn_eval_io_names);
  const TensorRecord &imagesIn = require(io, FNN_IO_INPUT, "images");
  const TensorRecord &labelsIn = require(io, FNN_IO_INPUT, "labels");
  const TensorRecord &lossOut = require(io, FNN_IO_OUTPUT, "loss");
  const TensorRecord &top1Out = require(io, FNN_IO_OUTPUT, "top1");
  const TensorRecord &top5Out = require(io, FNN_IO_OUTPUT, "top5");
  int64_t batches = countBatches(images, labels, imagesIn, labelsIn);
  size_t imageBytes = imagesIn.numElements() * sizeof(float);
  size_t labelBytes = labelsIn.numElements() * sizeof(int64_t);
  int64_t samples = lossOut.numElements();

  fnn_device *device = trainArena.device();
  auto *arena = static_cast<unsigned char *>(
      fnn_device_alloc(device, static_cast<size_t>(fnn_eval_arena_bytes)));
  if (!arena || fnn_eval_init(device, arena) != 0)
    fail(std::string("cannot initialise the evaluation step: ") +
         fnn_last_error());
  const ArenaAccess evalArena(device, arena);
  copyStateForEval(trainArena, evalArena);
  std::vector<float> loss(samples), top1(samples), top5(samples);
  for (int64_t s = 0; s < batches; ++s) {
    evalArena.write(imagesIn.offset, images.Data.data() + s * imageBytes,
                    imageBytes);
    evalArena.write(labelsIn.offset, labels.Data.data() + s * labelBytes,
                    labelBytes);
    fnn_eval_run(arena);
    fnn_device_synchronize(device);
    size_t bytes = samples * sizeof(float);
    evalArena.read(lossOut.offset, loss.data(), bytes);
    evalArena.read(top1Out.offset, top1.data(), bytes);
    evalArena.read(top5Out.offset, top5.data(), bytes);
    for (int64_t i = 0; i < samples; ++i)
      std::printf("eval %lld %lld %.9g %.9g %.9g\n", static_cast<long long>(s),
                  static_cast<long long>(i), loss[i], top1[i], top5[i]);
  }
  fnn_eval_release();
  fnn_device_free(device, arena);
}

} // namespace

int main(int argc, char **argv) {
  std::string imagesPath, labelsPath, evalImagesPath, evalLabelsPath,
      trainablesDir;
  float learningRate = 0.01f;
  int64_t fixedStep = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--images")
      imagesPath = argv[i + 1];
    else if (flag == "--labels")
      labelsPath = argv[i + 1];
    else if (flag == "--eval-images")
      evalImagesPath = argv[i + 1];
    else if (flag == "--eval-labels")
      evalLabelsPath = argv[i + 1];
    else if (flag == "--step")
      fixedStep = std::strtoll(argv[i + 1], nullptr, 10);
    else if (flag == "--trainables-out")
      trainablesDir = argv[i + 1];
    else if (flag == "--learning-rate")
      learningRate = std::strtof(argv[i + 1], nullptr);
    else
      fail("unknown argument '" + flag + "'");
  }
  NpyArray images, labels;
  for (auto [path, array] :
       {std::pair{&imagesPath, &images}, std::pair{&labelsPath, &labels}})
    if (auto status = fastnn::runtime::readNpy(*path, *array); !status.ok())
      fail(status.message());

  std::vector<TensorRecord> io =
      fastnn::runtime::readTensorRecords(fnn_model_io, fnn_model_io_names);
  const TensorRecord &imagesIn = require(io, FNN_IO_INPUT, "images");
  const TensorRecord &labelsIn = require(io, FNN_IO_INPUT, "labels");
  const TensorRecord &rateIn = require(io, FNN_IO_INPUT, "learning_rate");
  const TensorRecord &stepIn = require(io, FNN_IO_INPUT, "step");
  const TensorRecord &lossOut = require(io, FNN_IO_OUTPUT, "loss");
  const TensorRecord &top1Out = require(io, FNN_IO_OUTPUT, "top1");
  const TensorRecord &top5Out = require(io, FNN_IO_OUTPUT, "top5");
  int64_t steps = countBatches(images, labels, imagesIn, labelsIn);
  size_t imageBytes = imagesIn.numElements() * sizeof(float);
  size_t labelBytes = labelsIn.numElements() * sizeof(int64_t);

  std::string deviceError;
  fnn_device *device = fastnn::runtime::createModelDevice(0, deviceError);
  if (!device)
    fail(deviceError);
  auto *arena = static_cast<unsigned char *>(
      fnn_device_alloc(device, static_cast<size_t>(fnn_model_arena_bytes)));
  if (!arena || fnn_model_init(device, arena) != 0)
    fail(std::string("cannot initialise the model: ") + fnn_last_error());
  const ArenaAccess trainArena(device, arena);
  for (int64_t s = 0; s < steps; ++s) {
    int64_t step = fixedStep > 0 ? fixedStep : s + 1;
    trainArena.write(imagesIn.offset, images.Data.data() + s * imageBytes,
                     imageBytes);
    trainArena.write(labelsIn.offset, labels.Data.data() + s * labelBytes,
                     labelBytes);
    trainArena.write(rateIn.offset, learningRate);
    trainArena.write(stepIn.offset, step);
    fnn_model_run(arena);
    fnn_device_synchronize(device);
    auto loss = trainArena.read<float>(lossOut.offset);
    auto top1 = trainArena.read<float>(top1Out.offset);
    auto top5 = trainArena.read<float>(top5Out.offset);
    std::printf("step %lld %.9g %.9g %.9g\n", static_cast<long long>(step),
                loss, top1, top5);
  }
  if (!trainablesDir.empty())
    saveTrainables(trainArena, trainablesDir);
  if (!evalImagesPath.empty())
    evaluate(trainArena, evalImagesPath, evalLabelsPath);
  fnn_model_release();
  fnn_device_free(device, arena);
  fnn_device_destroy(device);
  return 0;
}
