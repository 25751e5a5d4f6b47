//===- HostDevice.h - per-element math shared by device and host -*- C++
//-*-===//
//
// The hand-written CUDA kernels keep their per-element arithmetic in inline
// functions marked FNN_HOST_DEVICE, so that host unit tests, compiled by the
// project's C++ compiler on machines without a GPU, run the very same code
// and compare it with the CPU kernels. Outside nvcc the marker is empty.
//
// The math calls go through fnnSqrt/fnnPow/fnnAbs: CUDA's sqrtf and powf in
// device code (correctly rounded sqrt: the .cu files are built without
// --use_fast_math and with --fmad=false, so no contraction changes the
// rounding the CPU kernels have), std:: in host code.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_HOSTDEVICE_H
#define FASTNN_RUNTIME_CUDA_HOSTDEVICE_H

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FNN_HOST_DEVICE __host__ __device__
#else
#define FNN_HOST_DEVICE
#endif

namespace fastnn::cuda {

FNN_HOST_DEVICE inline float fnnSqrt(float X) {
#if defined(__CUDA_ARCH__)
  return ::sqrtf(X);
#else
  return std::sqrt(X);
#endif
}

FNN_HOST_DEVICE inline double fnnSqrt(double X) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(X);
#else
  return std::sqrt(X);
#endif
}

FNN_HOST_DEVICE inline float fnnPow(float X, float Y) {
#if defined(__CUDA_ARCH__)
  return ::powf(X, Y);
#else
  return std::pow(X, Y);
#endif
}

FNN_HOST_DEVICE inline float fnnAbs(float X) {
#if defined(__CUDA_ARCH__)
  return ::fabsf(X);
#else
  return std::abs(X);
#endif
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_HOSTDEVICE_H
