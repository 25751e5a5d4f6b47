//===- InputStagingTest.cpp - Batches into a model's input tensors --------===//

#include "fastnn/trainer/InputStaging.h"

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace fastnn::runtime;
using fastnn::trainer::InputStaging;

/// A batch of 2 samples of 3 values at offset 0, their labels at 64, in an
/// arena on the CPU device.
class InputStagingTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Error;
    Device = createModelDevice(0, Error);
    ASSERT_TRUE(Device) << Error;
    Images.shape = {2, 3};
    Labels.shape = {2};
    Labels.dtype = FNN_I64;
    Labels.offset = 64;
  }
  void TearDown() override { fnn_device_destroy(Device); }

  /// One sample (1, 2, 3) of class 4: a partial batch.
  static void fill(float *ImagesIn, int64_t *LabelsIn) {
    for (int I = 0; I < 6; ++I)
      ImagesIn[I] = 9; // what the last batch left
    LabelsIn[0] = 4;
    LabelsIn[1] = 9;
    ImagesIn[0] = 1;
    ImagesIn[1] = 2;
    ImagesIn[2] = 3;
  }

  template <typename T> T at(int64_t Offset) const {
    T Value;
    std::memcpy(&Value, Arena.data() + Offset, sizeof(T));
    return Value;
  }

  fnn_device *Device = nullptr;
  std::vector<unsigned char> Arena = std::vector<unsigned char>(128, 0xff);
  TensorRecord Images, Labels;
};

TEST_F(InputStagingTest, TheSourceWritesTheArenaItselfOnTheCpu) {
  InputStaging Input(Images, Labels, ArenaAccess(Device, Arena.data()));
  EXPECT_EQ(static_cast<void *>(Input.images()), Arena.data());
  EXPECT_EQ(static_cast<void *>(Input.labels()), Arena.data() + 64);
  fill(Input.images(), Input.labels());
  Input.store(1);
  EXPECT_EQ(at<float>(0), 1.0f);
  EXPECT_EQ(at<float>(8), 3.0f);
  // The missing sample is a zero image of class 0.
  for (int64_t Offset = 12; Offset < 24; Offset += 4)
    EXPECT_EQ(at<float>(Offset), 0.0f) << Offset;
  EXPECT_EQ(at<int64_t>(64), 4);
  EXPECT_EQ(at<int64_t>(72), 0);
}

TEST_F(InputStagingTest, AStagedArenaGetsTheSameBatchOnStore) {
  InputStaging Input(Images, Labels, ArenaAccess(Device, Arena.data(), false));
  EXPECT_NE(static_cast<void *>(Input.images()), Arena.data());
  fill(Input.images(), Input.labels());
  EXPECT_EQ(Arena[0], 0xff) << "the arena changed before store()";
  Input.store(1);
  EXPECT_EQ(at<float>(4), 2.0f);
  EXPECT_EQ(at<float>(20), 0.0f);
  EXPECT_EQ(at<int64_t>(64), 4);
  EXPECT_EQ(at<int64_t>(72), 0);
}

TEST_F(InputStagingTest, HalfImagesAndInt32LabelsAreConverted) {
  Images.dtype = FNN_F16;
  Labels.dtype = FNN_I32;
  InputStaging Input(Images, Labels, ArenaAccess(Device, Arena.data()));
  EXPECT_NE(static_cast<void *>(Input.images()), Arena.data());
  fill(Input.images(), Input.labels());
  Input.store(1);
  EXPECT_EQ(at<uint16_t>(0), floatToHalf(1.0f));
  EXPECT_EQ(at<uint16_t>(4), floatToHalf(3.0f));
  EXPECT_EQ(at<uint16_t>(6), 0);
  EXPECT_EQ(at<int32_t>(64), 4);
  EXPECT_EQ(at<int32_t>(68), 0);
  // Only the arena's bytes of those types were written.
  EXPECT_EQ(Arena[12], 0xff);
  EXPECT_EQ(Arena[72], 0xff);
}

TEST_F(InputStagingTest, ASunkLoopFillsTheBuffersItIsGiven) {
  InputStaging Input(Images, Labels, ArenaAccess(Device, Arena.data()));
  std::vector<float> ImagesOut(6);
  std::vector<int64_t> LabelsOut(2);
  EXPECT_EQ(Input.images(ImagesOut.data()), ImagesOut.data());
  EXPECT_EQ(Input.labels(LabelsOut.data()), LabelsOut.data());
  fill(ImagesOut.data(), LabelsOut.data());
  Input.store(1, ImagesOut.data(), LabelsOut.data());
  EXPECT_EQ(ImagesOut, (std::vector<float>{1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(LabelsOut, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(Arena[0], 0xff) << "the arena is not the buffer given";
}

} // namespace
