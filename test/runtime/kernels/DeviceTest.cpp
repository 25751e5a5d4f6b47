//===- DeviceTest.cpp - fnn_device of the CPU runtime ---------------------===//

#include "KernelTestUtil.h"

#include <cstring>
#include <string>

using namespace fastnn::test;

namespace {

TEST_F(KernelTest, AllocIs64ByteAlignedAndCopiesRoundTrip) {
  for (size_t Bytes : {size_t(1), size_t(100), size_t(4096), size_t(12345)}) {
    void *P = fnn_device_alloc(Device, Bytes);
    ASSERT_NE(P, nullptr) << fnn_last_error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(P) % 64, 0u);
    std::vector<unsigned char> In(Bytes), Out(Bytes);
    for (size_t I = 0; I < Bytes; ++I)
      In[I] = static_cast<unsigned char>(I * 7);
    fnn_copy_to_device(Device, P, In.data(), Bytes);
    fnn_device_synchronize(Device);
    fnn_copy_to_host(Device, Out.data(), P, Bytes);
    EXPECT_EQ(In, Out);
    fnn_device_free(Device, P);
  }
}

// The CPU runtime drives the CPU only: a CUDA device comes from the CUDA
// runtime (fastnn_runtime_cuda, tested in cuda/), which a CPU executable
// does not link.
TEST(DeviceCreate, CpuRuntimeRejectsOtherKindsWithAMessage) {
  EXPECT_EQ(fnn_device_create(FNN_DEVICE_CUDA, 0), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("fnn_device_create"),
            std::string::npos);
  EXPECT_EQ(fnn_device_create(FNN_DEVICE_CPU, 1), nullptr);
}

TEST(DeviceCreate, NullDeviceOrDescriptorIsAnError) {
  fnn_softmax_desc D{};
  EXPECT_EQ(fnn_softmax_create(nullptr, &D), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("null"), std::string::npos);
}

} // namespace
