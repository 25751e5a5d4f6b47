//===- InitialWeightsTest.cpp - Weights files and ONNX initializers -------===//

#include "fastnn/trainer/InitialWeights.h"
#include "fastnn/runtime/model.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/OnnxInitializers.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fastnn;
using namespace fastnn::trainer;
using runtime::TensorRecord;

namespace {

namespace fs = std::filesystem;

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

TensorRecord record(const std::string &Name, int64_t Role,
                    std::vector<int64_t> Shape, int64_t Offset) {
  TensorRecord R;
  R.name = Name;
  R.kind = Role;
  R.dtype = FNN_F32;
  R.shape = std::move(Shape);
  R.offset = Offset;
  return R;
}

/// A model of a filter, a statistic and a slot, and a weights file of the
/// first two written from another arena.
class InitialWeightsTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Template = ::testing::TempDir() + "weights_XXXXXX";
    ASSERT_TRUE(mkdtemp(Template.data()));
    Dir = Template;
    std::string Error;
    Device = runtime::createModelDevice(0, Error);
    ASSERT_TRUE(Device) << Error;
    State = {record("conv/w", FNN_STATE_TRAINABLE, {2, 3}, 0),
             record("bn/mean", FNN_STATE_STATISTIC, {2}, 24),
             record("conv/w.m", FNN_STATE_SLOT, {2, 3}, 32)};
    Source.resize(56);
    for (size_t I = 0; I < Source.size(); ++I)
      Source[I] = static_cast<unsigned char>(I * 5 + 3);
    Target.assign(Source.size(), 0);
  }
  void TearDown() override {
    fs::remove_all(Dir);
    fnn_device_destroy(Device);
  }

  runtime::ArenaAccess access(std::vector<unsigned char> &Memory) {
    return runtime::ArenaAccess(Device, Memory.data());
  }

  /// Writes the records of Records (from Source) as a weights file.
  std::string writeWeights(const std::vector<TensorRecord> &Records) {
    Checkpoint C;
    C.Tensors = arenaTensors(Records, access(Source), Regions);
    std::string Path = Dir + "/model.bin.weights";
    Status S = writeCheckpoint(Path, C);
    EXPECT_TRUE(S.ok()) << S.message();
    return Path;
  }

  std::string Dir;
  std::vector<TensorRecord> State;
  std::vector<unsigned char> Source, Target;
  fnn_device *Device = nullptr;
  std::vector<runtime::HostRegion> Regions;
};

TEST_F(InitialWeightsTest, LoadsTheParametersAndStatisticsNotTheSlots) {
  std::string Path = writeWeights({State[0], State[1]});
  Status S = loadWeightsFile(Path, State, access(Target), "weights_file=FILE");
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(0, std::memcmp(Target.data(), Source.data(), 32));
  EXPECT_EQ(std::vector<unsigned char>(24, 0),
            std::vector<unsigned char>(Target.begin() + 32, Target.end()));
}

TEST_F(InitialWeightsTest, AMissingOrOtherModelsFileIsOneLine) {
  std::string Missing = Dir + "/none.weights";
  Status S =
      loadWeightsFile(Missing, State, access(Target), "weights_file=FILE");
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message().rfind(Missing + ": no such weights file", 0), 0u)
      << S.message();
  EXPECT_TRUE(contains(S.message(), "weights_file=FILE")) << S.message();

  // Another shape of the filter: the first offender and the count.
  std::vector<TensorRecord> Other = {
      record("conv/w", FNN_STATE_TRAINABLE, {3, 2}, 0), State[1]};
  std::string Path = writeWeights(Other);
  S = loadWeightsFile(Path, State, access(Target), "weights_file=FILE");
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "tensor 'conv/w' is dtype 0 [3, 2], the "
                                    "model's trainable dtype 0 [2, 3]"))
      << S.message();
  EXPECT_FALSE(contains(S.message(), "\n")) << S.message();

  // A tensor the model does not have.
  Path = writeWeights(
      {State[0], State[1], record("extra", FNN_STATE_TRAINABLE, {2}, 24)});
  S = loadWeightsFile(Path, State, access(Target), "weights_file=FILE");
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "holds tensor 'extra', which the model "
                                    "does not have"))
      << S.message();
}

TEST_F(InitialWeightsTest, InitializeCountsTheOffenders) {
  Checkpoint C;
  C.Tensors = arenaTensors({State[0]}, access(Source), Regions);
  C.Tensors[0].Shape = {6};
  RestoreReport Report;
  Status S = restoreTensors(C.Tensors, "file", State, access(Target),
                            RestoreMode::Initialize, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "file: tensor 'conv/w' is dtype 0 [6], the model's "
                         "trainable dtype 0 [2, 3] (2 of the model's "
                         "parameters and statistics are missing or of "
                         "another dtype or shape)");
}

/// An ONNX model of two float initializers (one inline, one in a data
/// file beside it), an int64 one and an Identity copying the first.
TEST_F(InitialWeightsTest, ReadsOnnxInitializersInlineExternalAndCopied) {
  onnx::ModelProto Model;
  onnx::GraphProto &Graph = *Model.mutable_graph();
  onnx::TensorProto &Filter = *Graph.add_initializer();
  Filter.set_name("conv/w");
  Filter.set_data_type(onnx::TensorProto::FLOAT);
  Filter.add_dims(2);
  Filter.add_dims(3);
  for (int I = 0; I < 6; ++I)
    Filter.add_float_data(static_cast<float>(I));
  onnx::TensorProto &Mean = *Graph.add_initializer();
  Mean.set_name("bn/mean");
  Mean.set_data_type(onnx::TensorProto::FLOAT);
  Mean.add_dims(2);
  Mean.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *Location = Mean.add_external_data();
  Location->set_key("location");
  Location->set_value("model.data");
  auto *Offset = Mean.add_external_data();
  Offset->set_key("offset");
  Offset->set_value("4");
  const float MeanValues[2] = {0.5f, -1.5f};
  {
    std::ofstream Data(Dir + "/model.data", std::ios::binary);
    Data.write("pad!", 4);
    Data.write(reinterpret_cast<const char *>(MeanValues), sizeof(MeanValues));
  }
  onnx::TensorProto &Shape = *Graph.add_initializer();
  Shape.set_name("shape");
  Shape.set_data_type(onnx::TensorProto::INT64);
  Shape.add_dims(1);
  Shape.add_int64_data(6);
  onnx::NodeProto &Copy = *Graph.add_node();
  Copy.set_op_type("Identity");
  Copy.add_input("conv/w");
  Copy.add_output("conv/w_copy");
  std::string Path = Dir + "/model.onnx";
  {
    std::ofstream Out(Path, std::ios::binary);
    ASSERT_TRUE(Model.SerializeToOstream(&Out));
  }

  OnnxInitializers Read;
  Status S = readOnnxInitializers(Path, Read);
  ASSERT_TRUE(S.ok()) << S.message();
  ASSERT_EQ(Read.Tensors.size(), 3u);
  EXPECT_EQ(Read.Tensors[0].Name, "conv/w");
  EXPECT_EQ(Read.Tensors[0].Shape, (std::vector<int64_t>{2, 3}));
  float Fifth = 0;
  std::memcpy(&Fifth, Read.Tensors[0].Data + 5 * sizeof(float), sizeof(float));
  EXPECT_EQ(Fifth, 5.0f);
  EXPECT_EQ(Read.Tensors[1].Name, "bn/mean");
  EXPECT_EQ(0,
            std::memcmp(Read.Tensors[1].Data, MeanValues, sizeof(MeanValues)));
  EXPECT_EQ(Read.Tensors[2].Name, "conv/w_copy");
  EXPECT_EQ(Read.Tensors[2].Data, Read.Tensors[0].Data);

  RestoreReport Report;
  S = restoreTensors(Read.Tensors, Path, State, access(Target),
                     RestoreMode::Initialize, Report);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Report.Restored, 2);
  EXPECT_EQ(Report.Unused, (std::vector<std::string>{"conv/w_copy"}));

  // The data file too short for its tensor.
  fs::resize_file(Dir + "/model.data", 8);
  S = readOnnxInitializers(Path, Read);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "model.data: too short for the external "
                                    "data of 'bn/mean'"))
      << S.message();
}

TEST_F(InitialWeightsTest, GarbageIsNotAnOnnxModel) {
  std::string Path = Dir + "/garbage.onnx";
  std::ofstream(Path, std::ios::binary) << "\xff\xff\xff garbage";
  OnnxInitializers Read;
  Status S = readOnnxInitializers(Path, Read);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message().rfind(Path + ": not an ONNX model", 0), 0u)
      << S.message();
}

TEST(InitFromOnnxTest, IsNotTakenWithAFinetune) {
  Hparams H;
  ASSERT_TRUE(H.parseFlags({"--init_from_onnx=pretrained.onnx",
                            "--task_type=finetune", "--model_dir=/tmp/m"})
                  .ok());
  Status S = H.validate();
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(),
            "--init_from_onnx: init_from_onnx=pretrained.onnx and "
            "task_type=finetune (set at --task_type) both choose the "
            "starting weights; give one");
  Hparams Pretrain;
  ASSERT_TRUE(Pretrain.parseFlags({"--init_from_onnx=pretrained.onnx"}).ok());
  EXPECT_TRUE(Pretrain.validate().ok());
}

} // namespace
