//===- ModelDeviceTest.cpp - The device and host access to its arena ------===//

#include "fastnn/runtime/ModelDevice.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace fastnn::runtime;

class ModelDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Error;
    Device = createModelDevice(0, Error);
    ASSERT_TRUE(Device) << Error;
    Arena = static_cast<unsigned char *>(fnn_device_alloc(Device, Bytes));
    ASSERT_TRUE(Arena);
    std::memset(Arena, 0, Bytes);
  }
  void TearDown() override {
    fnn_device_free(Device, Arena);
    fnn_device_destroy(Device);
  }

  static constexpr size_t Bytes = 256;
  fnn_device *Device = nullptr;
  unsigned char *Arena = nullptr;
};

TEST_F(ModelDeviceTest, TheDeviceIsTheLinkedRuntimes) {
  EXPECT_EQ(fnn_device_default_kind(), FNN_DEVICE_CPU);
  EXPECT_EQ(deviceKindName(FNN_DEVICE_CPU), "CPU");
  EXPECT_EQ(deviceKindName(FNN_DEVICE_CUDA), "GPU");
  EXPECT_EQ(deviceKindName(7), "kind 7");
  // Every worker of a host shares its CPU; GPUs are one per worker.
  EXPECT_EQ(modelDeviceIndex(FNN_DEVICE_CPU, 3), 0);
  EXPECT_EQ(modelDeviceIndex(FNN_DEVICE_CUDA, 3), 3);
  // A second worker on the host gets the same CPU device.
  std::string Error;
  fnn_device *Other = createModelDevice(1, Error);
  ASSERT_TRUE(Other) << Error;
  fnn_device_destroy(Other);
}

TEST_F(ModelDeviceTest, ScalarsAndTensorsAtOffsets) {
  ArenaAccess Access(Device, Arena);
  EXPECT_TRUE(Access.hostAddressable());
  EXPECT_EQ(Access.arena(), Arena);
  EXPECT_EQ(Access.device(), Device);

  Access.write<float>(4, 0.25f);
  Access.write<int64_t>(16, -7);
  std::vector<float> Tensor(8);
  std::iota(Tensor.begin(), Tensor.end(), 1.0f);
  Access.write(32, Tensor.data(), Tensor.size() * sizeof(float));

  EXPECT_EQ(Access.read<float>(4), 0.25f);
  EXPECT_EQ(Access.read<int64_t>(16), -7);
  std::vector<float> Back(8);
  Access.read(32, Back.data(), Back.size() * sizeof(float));
  EXPECT_EQ(Back, Tensor);
  // Exactly the bytes written changed.
  EXPECT_EQ(Arena[3], 0);
  EXPECT_EQ(Arena[8], 0);
  EXPECT_EQ(Arena[64], 0);
  float Second;
  std::memcpy(&Second, Arena + 36, sizeof(Second));
  EXPECT_EQ(Second, 2.0f);
}

TEST_F(ModelDeviceTest, HostRegionsAreTheArenaOnTheCpu) {
  ArenaAccess Access(Device, Arena);
  TensorRecord Record;
  Record.dtype = FNN_F32;
  Record.shape = {2, 3};
  Record.offset = 64;
  HostRegion Region(Access, Record);
  EXPECT_EQ(Region.size(), 24u);
  EXPECT_EQ(Region.data(), Arena + 64);
  Region.data()[0] = 9;
  Region.store();
  EXPECT_EQ(Arena[64], 9);
}

TEST_F(ModelDeviceTest, StagedRegionsMoveOnlyOnLoadAndStore) {
  // The path of a device the host cannot address, on the CPU.
  ArenaAccess Access(Device, Arena, false);
  for (size_t I = 0; I < Bytes; ++I)
    Arena[I] = static_cast<unsigned char>(I);
  HostRegion Region(Access, 100, 10);
  ASSERT_NE(Region.data(), Arena + 100);
  Region.load();
  for (size_t I = 0; I < 10; ++I)
    EXPECT_EQ(Region.data()[I], 100 + I);
  for (size_t I = 0; I < 10; ++I)
    Region.data()[I] = static_cast<unsigned char>(200 + I);
  EXPECT_EQ(Arena[100], 100) << "written before store()";
  Region.store();
  for (size_t I = 0; I < 10; ++I)
    EXPECT_EQ(Arena[100 + I], 200 + I);
  EXPECT_EQ(Arena[99], 99);
  EXPECT_EQ(Arena[110], 110);
  // A moved region still mirrors the same bytes.
  HostRegion Moved = std::move(Region);
  Arena[105] = 1;
  Moved.load();
  EXPECT_EQ(Moved.data()[5], 1);
}

} // namespace
