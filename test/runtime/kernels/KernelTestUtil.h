//===- KernelTestUtil.h - Helpers for the CPU kernel tests ------*- C++ -*-===//

#ifndef FASTNN_TEST_RUNTIME_KERNELS_KERNELTESTUTIL_H
#define FASTNN_TEST_RUNTIME_KERNELS_KERNELTESTUTIL_H

#include "fastnn/runtime/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

namespace fastnn::test {

inline fnn_shape shape(std::initializer_list<int64_t> Dims) {
  fnn_shape S{};
  S.rank = static_cast<int64_t>(Dims.size());
  int I = 0;
  for (int64_t D : Dims)
    S.dims[I++] = D;
  return S;
}

/// The shape of an N x C x H x W activation as stored: NHWC when \p Nhwc,
/// else NCHW. A filter O x I x KH x KW goes the same way (OHWI / OIHW).
inline fnn_shape layoutShape(int64_t N, int64_t C, int64_t H, int64_t W,
                             bool Nhwc) {
  return Nhwc ? shape({N, H, W, C}) : shape({N, C, H, W});
}

inline int64_t numElements(const fnn_shape &S) {
  int64_t N = 1;
  for (int64_t I = 0; I < S.rank; ++I)
    N *= S.dims[I];
  return N;
}

/// A pool2d descriptor (NCHW) with Kernel x Kernel windows at stride
/// Stride, undilated and unpadded: a test sets other pads itself.
inline fnn_pool2d_desc poolDesc(int64_t Kind, const fnn_shape &Input,
                                const fnn_shape &Output, int64_t Kernel,
                                int64_t Stride, int64_t Dtype = FNN_F32) {
  fnn_pool2d_desc D{};
  D.input = Input;
  D.output = Output;
  D.dtype = Dtype;
  D.layout = FNN_NCHW;
  D.kind = Kind;
  D.kernel[0] = D.kernel[1] = Kernel;
  D.strides[0] = D.strides[1] = Stride;
  D.dilations[0] = D.dilations[1] = 1;
  return D;
}

inline std::vector<float> randomData(size_t N, unsigned Seed, float Lo = -1.f,
                                     float Hi = 1.f) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Dist(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = Dist(Gen);
  return V;
}

/// Relative error against a float64 reference, with magnitudes below 1
/// treated as 1 so that values near zero are not held to a relative bound.
inline void expectClose(const std::vector<float> &Got,
                        const std::vector<double> &Ref, double Tol = 1e-5) {
  ASSERT_EQ(Got.size(), Ref.size());
  size_t Bad = 0;
  for (size_t I = 0; I < Got.size(); ++I) {
    double Err = std::abs(Got[I] - Ref[I]) / std::max(1.0, std::abs(Ref[I]));
    if (!(Err <= Tol) && Bad++ < 5)
      ADD_FAILURE() << "element " << I << ": got " << Got[I] << ", expected "
                    << Ref[I];
  }
  EXPECT_EQ(Bad, 0u) << "elements out of tolerance";
}

/// NCHW <-> NHWC copies, for running NHWC kernels against NCHW references.
inline std::vector<float> nchwToNhwc(const std::vector<float> &X, int64_t N,
                                     int64_t C, int64_t H, int64_t W) {
  std::vector<float> Y(X.size());
  for (int64_t A = 0; A < N; ++A)
    for (int64_t B = 0; B < C; ++B)
      for (int64_t Hh = 0; Hh < H; ++Hh)
        for (int64_t Ww = 0; Ww < W; ++Ww)
          Y[((A * H + Hh) * W + Ww) * C + B] =
              X[((A * C + B) * H + Hh) * W + Ww];
  return Y;
}

inline std::vector<float> nhwcToNchw(const std::vector<float> &X, int64_t N,
                                     int64_t C, int64_t H, int64_t W) {
  std::vector<float> Y(X.size());
  for (int64_t A = 0; A < N; ++A)
    for (int64_t B = 0; B < C; ++B)
      for (int64_t Hh = 0; Hh < H; ++Hh)
        for (int64_t Ww = 0; Ww < W; ++Ww)
          Y[((A * C + B) * H + Hh) * W + Ww] =
              X[((A * H + Hh) * W + Ww) * C + B];
  return Y;
}

/// float to bfloat16 or float16 bits (round to nearest even) and back, for
/// running low-precision kernels; Dtype is FNN_BF16 or FNN_F16.
inline uint16_t toLowBits(float Value, int64_t Dtype) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  if (Dtype == FNN_BF16)
    return static_cast<uint16_t>((Bits + 0x7fffu + ((Bits >> 16) & 1u)) >> 16);
  // Normal-range float16 only: the tests' values stay within it.
  uint32_t Sign = (Bits >> 16) & 0x8000u, Magnitude = Bits & 0x7fffffffu;
  if (Magnitude < 0x38800000u)
    return static_cast<uint16_t>(Sign);
  uint32_t Rounded = Magnitude + 0xfffu + ((Magnitude >> 13) & 1u);
  return static_cast<uint16_t>(Sign | ((Rounded - 0x38000000u) >> 13));
}

inline float fromLowBits(uint16_t Value, int64_t Dtype) {
  uint32_t Bits;
  if (Dtype == FNN_BF16) {
    Bits = static_cast<uint32_t>(Value) << 16;
  } else {
    uint32_t Exponent = (Value >> 10) & 0x1fu;
    Bits = static_cast<uint32_t>(Value & 0x8000u) << 16;
    if (Exponent != 0)
      Bits |= ((Exponent + 112) << 23) | ((Value & 0x3ffu) << 13);
  }
  float Result;
  std::memcpy(&Result, &Bits, 4);
  return Result;
}

inline std::vector<uint16_t> toLow(const std::vector<float> &X, int64_t Dtype) {
  std::vector<uint16_t> Y(X.size());
  for (size_t I = 0; I < X.size(); ++I)
    Y[I] = toLowBits(X[I], Dtype);
  return Y;
}

inline std::vector<float> fromLow(const std::vector<uint16_t> &X,
                                  int64_t Dtype) {
  std::vector<float> Y(X.size());
  for (size_t I = 0; I < X.size(); ++I)
    Y[I] = fromLowBits(X[I], Dtype);
  return Y;
}

/// X rounded to the low type, as float.
inline std::vector<float> roundedTo(const std::vector<float> &X,
                                    int64_t Dtype) {
  return fromLow(toLow(X, Dtype), Dtype);
}

struct KernelDeleter {
  void operator()(fnn_kernel *K) const { fnn_kernel_destroy(K); }
};
using KernelPtr = std::unique_ptr<fnn_kernel, KernelDeleter>;

class KernelTest : public ::testing::Test {
protected:
  void SetUp() override {
    Device = fnn_device_create(FNN_DEVICE_CPU, 0);
    ASSERT_NE(Device, nullptr) << fnn_last_error();
  }
  void TearDown() override { fnn_device_destroy(Device); }
  fnn_device *Device = nullptr;
};

} // namespace fastnn::test

#endif // FASTNN_TEST_RUNTIME_KERNELS_KERNELTESTUTIL_H
