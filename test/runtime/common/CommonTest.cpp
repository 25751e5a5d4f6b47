//===- CommonTest.cpp - runtime/kernels/common without a backend ----------===//
//
// Linked with fastnn_runtime_common only: what a second backend reuses must
// work without the CPU one.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/AlignedBuffer.h"
#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/KernelBase.h"
#include "fastnn/runtime/LastError.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using namespace fastnn::runtime;

namespace {

fnn_shape shapeOf(std::vector<int64_t> Dims) {
  fnn_shape Shape{};
  Shape.rank = static_cast<int64_t>(Dims.size());
  for (size_t I = 0; I < Dims.size(); ++I)
    Shape.dims[I] = Dims[I];
  return Shape;
}

TEST(ShapeText, ListsAsTheDriversPrintThem) {
  EXPECT_EQ(shapeText(std::vector<int64_t>{2, 3}), "[2, 3]");
  EXPECT_EQ(shapeText(std::vector<int64_t>{7}), "[7]");
  EXPECT_EQ(shapeText(std::vector<int64_t>{}), "[]");
}

TEST(ShapeText, NumpyTuples) {
  EXPECT_EQ(numpyShapeText({2, 3}), "(2, 3)");
  EXPECT_EQ(numpyShapeText({5}), "(5,)");
  EXPECT_EQ(numpyShapeText({}), "()");
}

TEST(ShapeText, DescriptorShapes) {
  EXPECT_EQ(shapeText(shapeOf({2, 3, 8, 8})), "2x3x8x8");
  EXPECT_EQ(shapeText(shapeOf({})), "scalar");
  fnn_shape Bad{};
  Bad.rank = FNN_MAX_RANK + 1;
  EXPECT_EQ(shapeText(Bad), "<rank " + std::to_string(FNN_MAX_RANK + 1) + ">");
  Bad.rank = -1;
  EXPECT_EQ(shapeText(Bad), "<rank -1>");
}

TEST(DTypes, LayoutNames) {
  EXPECT_STREQ(layoutName(FNN_NCHW), "NCHW");
  EXPECT_STREQ(layoutName(FNN_NHWC), "NHWC");
  EXPECT_STREQ(layoutName(12345), "?");
}

TEST(DTypes, HalfBitsOfKnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds past the largest half
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie to even
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7e00,
            0x7e00);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
}

TEST(DTypes, EveryFiniteHalfRoundTrips) {
  for (uint32_t Bits = 0; Bits < 0x10000u; ++Bits) {
    uint16_t Half = static_cast<uint16_t>(Bits);
    if ((Half & 0x7c00u) == 0x7c00u)
      continue; // infinities and NaNs
    ASSERT_EQ(floatToHalf(halfToFloat(Half)), Half) << std::hex << Bits;
  }
}

TEST(DTypes, Bfloat16BitsOfKnownValues) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // The largest float rounds past the largest bfloat16.
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBfloat16(-std::numeric_limits<float>::infinity()), 0xff80);
  // A NaN whose mantissa rounding would carry stays a NaN.
  uint32_t NanBits = 0x7fffffffu;
  float Nan;
  std::memcpy(&Nan, &NanBits, 4);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(Nan))));
  EXPECT_EQ(bfloat16ToFloat(0x3eab), 0.333984375f);
}

TEST(DTypes, EveryBfloat16RoundTrips) {
  for (uint32_t Bits = 0; Bits < 0x10000u; ++Bits) {
    uint16_t Bfloat16 = static_cast<uint16_t>(Bits);
    float Value = bfloat16ToFloat(Bfloat16);
    if (std::isnan(Value))
      ASSERT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(Value))));
    else
      ASSERT_EQ(floatToBfloat16(Value), Bfloat16) << std::hex << Bits;
  }
}

TEST(AlignedBuffer, Is64ByteAlignedAndNullForZeroBytes) {
  for (size_t Bytes : {size_t(1), size_t(64), size_t(1000)}) {
    AlignedBuffer Buffer = allocateAligned(Bytes);
    ASSERT_NE(Buffer.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(Buffer.get()) % 64, 0u);
  }
  EXPECT_EQ(allocateAligned(0).get(), nullptr);
}

TEST(LastError, SetClearAndPerThread) {
  setLastError("first failure");
  EXPECT_STREQ(fnn_last_error(), "first failure");
  std::string OtherThread = "unset";
  std::thread([&] { OtherThread = fnn_last_error(); }).join();
  EXPECT_EQ(OtherThread, "");
  clearLastError();
  EXPECT_STREQ(fnn_last_error(), "");
}

std::string kernelErrorOf(void (*Check)()) {
  try {
    Check();
  } catch (const KernelError &E) {
    return E.what();
  }
  return "no error";
}

TEST(Validation, ShapesRanksAndDimensions) {
  fnn_shape Image = shapeOf({1, 3, 4, 4});
  EXPECT_NO_THROW(checkShape(Image, "input", 4, 4));
  EXPECT_NO_THROW(checkShape(Image, "input", 3, 5));
  EXPECT_EQ(kernelErrorOf([] {
              checkShape(shapeOf({1, 3, 4, 4}), "input", 2, 2);
            }),
            "input has rank 4, expected 2");
  EXPECT_EQ(kernelErrorOf([] {
              checkShape(shapeOf({1, 3}), "filter", 3, 5);
            }),
            "filter has rank 2, expected 3 to 5");
  EXPECT_EQ(kernelErrorOf([] {
              checkShape(shapeOf({2, 0}), "bias", 2, 2);
            }),
            "bias has a non-positive dimension");
}

TEST(Validation, DTypesLayoutsAndPostOps) {
  EXPECT_NO_THROW(checkF32(FNN_F32));
  EXPECT_NE(kernelErrorOf([] { checkF32(FNN_BF16); }).find("only FNN_F32"),
            std::string::npos);
  for (int64_t DType : {FNN_F32, FNN_BF16, FNN_F16})
    EXPECT_NO_THROW(checkFloatType(DType));
  EXPECT_NE(kernelErrorOf([] { checkFloatType(FNN_I32); }).find("FNN_F16"),
            std::string::npos);
  EXPECT_NO_THROW(checkLayout(FNN_NHWC));
  EXPECT_EQ(kernelErrorOf([] { checkLayout(7); }), "unknown layout 7");
  EXPECT_NO_THROW(checkPostOp(FNN_POST_RELU));
  EXPECT_NO_THROW(checkPostOp(FNN_POST_ACCUMULATE | FNN_POST_RELU6));
  EXPECT_EQ(kernelErrorOf([] { checkPostOp(3); }), "unknown post-op 3");
  EXPECT_EQ(kernelErrorOf([] { checkPostOp(32); }), "unknown post-op 32");
  EXPECT_EQ(kernelErrorOf(
                [] { checkPostOp(FNN_POST_ACCUMULATE | FNN_POST_RESIDUAL); }),
            "unknown post-op 24");
  EXPECT_NE(kernelErrorOf([] {
              checkPostOp(FNN_POST_RESIDUAL);
            }).find("not FNN_POST_RESIDUAL"),
            std::string::npos);
  EXPECT_NO_THROW(
      checkTrainingBatchNormPostOp(FNN_POST_RESIDUAL | FNN_POST_RELU6));
  EXPECT_NO_THROW(checkReluPostOp(FNN_POST_RELU, "matmul"));
  EXPECT_EQ(kernelErrorOf([] { checkReluPostOp(FNN_POST_RELU6, "matmul"); }),
            "matmul takes post-op FNN_POST_NONE or FNN_POST_RELU, not relu6");
  EXPECT_EQ(postOpText(FNN_POST_ACCUMULATE | FNN_POST_RELU),
            ", accumulate, relu");
  EXPECT_EQ(postOpText(FNN_POST_RESIDUAL | FNN_POST_RELU), ", residual, relu");
  EXPECT_EQ(postOpText(FNN_POST_NONE), "");
  const int64_t Pair[] = {3, 5};
  EXPECT_EQ(formatPair(Pair), "3x5");
  EXPECT_EQ(formatPair(Pair, ", "), "3, 5");
}

/// A backend's kernel, counting destructions to show fnn_kernel_destroy
/// runs the derived destructor through the base.
struct CountingKernel final : fnn_kernel {
  explicit CountingKernel(int &Destroyed) : Destroyed(Destroyed) {}
  ~CountingKernel() override { ++Destroyed; }
  int &Destroyed;
};

struct TestDesc {
  int64_t Value;
};

std::string describe(const TestDesc &D) {
  return "value " + std::to_string(D.Value);
}

TEST(CreateKernel, ReturnsTheKernelAndDestroyFreesItThroughTheBase) {
  int Device = 0, Destroyed = 0;
  TestDesc Desc{1};
  setLastError("stale");
  fnn_kernel *Kernel = createKernel(
      "fnn_test_create", &Device, &Desc,
      [&](const TestDesc &) {
        return std::make_unique<CountingKernel>(Destroyed);
      },
      describe);
  ASSERT_NE(Kernel, nullptr);
  EXPECT_STREQ(fnn_last_error(), "");
  fnn_kernel_destroy(Kernel);
  EXPECT_EQ(Destroyed, 1);
  fnn_kernel_destroy(nullptr);
}

TEST(CreateKernel, ExceptionsBecomeOneLineErrors) {
  int Device = 0, Destroyed = 0;
  TestDesc Desc{42};
  auto Failing = [&](const TestDesc &) -> std::unique_ptr<CountingKernel> {
    throw KernelError("negative count");
  };
  EXPECT_EQ(createKernel("fnn_test_create", &Device, &Desc, Failing, describe),
            nullptr);
  EXPECT_STREQ(fnn_last_error(), "fnn_test_create: negative count; value 42");

  auto OutOfMemory = [&](const TestDesc &) -> std::unique_ptr<CountingKernel> {
    throw std::bad_alloc();
  };
  EXPECT_EQ(
      createKernel("fnn_test_create", &Device, &Desc, OutOfMemory, describe),
      nullptr);
  EXPECT_STREQ(fnn_last_error(), "fnn_test_create: out of memory; value 42");

  auto Unused = [&](const TestDesc &) {
    return std::make_unique<CountingKernel>(Destroyed);
  };
  EXPECT_EQ(createKernel("fnn_test_create", static_cast<int *>(nullptr), &Desc,
                         Unused, describe),
            nullptr);
  EXPECT_STREQ(fnn_last_error(),
               "fnn_test_create: device or descriptor is null");
  EXPECT_EQ(createKernel("fnn_test_create", &Device,
                         static_cast<TestDesc *>(nullptr), Unused, describe),
            nullptr);
  EXPECT_EQ(Destroyed, 0);
}

struct Batches {
  int Calls = 0;
  void *Images = nullptr, *Labels = nullptr;
};

void recordBatch(void *Context, void *Images, void *Labels) {
  auto &B = *static_cast<Batches *>(Context);
  ++B.Calls;
  B.Images = Images;
  B.Labels = Labels;
}

TEST(InputSource, NextCallsTheRegisteredSource) {
  Batches B;
  float Images[4];
  int32_t Labels[2];
  fnn_input_set_source(recordBatch, &B);
  fnn_input_next(Images, Labels);
  fnn_input_next(Images, Labels);
  EXPECT_EQ(B.Calls, 2);
  EXPECT_EQ(B.Images, Images);
  EXPECT_EQ(B.Labels, Labels);
  fnn_input_set_source(nullptr, nullptr);
}

TEST(InputSourceDeathTest, NextWithoutASourceEndsTheProcess) {
  fnn_input_set_source(nullptr, nullptr);
  EXPECT_EXIT(fnn_input_next(nullptr, nullptr), testing::ExitedWithCode(1),
              "no input source registered");
}

TEST(Trace, RecordsSpansOnlyWhileEnabledAndCollectsInPieces) {
  fnn_trace_enable(0);
  fnn_trace_begin("ignored");
  fnn_trace_end();
  fnn_trace_enable(1);
  EXPECT_EQ(fnn_trace_collect(nullptr, 0), 0);
  int64_t Before = fnn_trace_now_ns();
  for (const char *Name : {"conv", "relu", "pool"}) {
    fnn_trace_begin(Name);
    fnn_trace_end();
  }
  fnn_trace_span Spans[2];
  ASSERT_EQ(fnn_trace_collect(Spans, 2), 2);
  EXPECT_STREQ(Spans[0].name, "conv");
  EXPECT_STREQ(Spans[1].name, "relu");
  EXPECT_GE(Spans[0].start_ns, Before);
  EXPECT_GE(Spans[0].end_ns, Spans[0].start_ns);
  ASSERT_EQ(fnn_trace_collect(Spans, 2), 1);
  EXPECT_STREQ(Spans[0].name, "pool");
  EXPECT_EQ(fnn_trace_collect(Spans, 2), 0);
  fnn_trace_enable(0);
}

} // namespace
