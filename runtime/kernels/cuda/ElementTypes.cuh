//===- ElementTypes.cuh - the ABI's element types in kernels --*- C++ -*-===//
//
// float, __half and __nv_bfloat16 as the kernels read and write them: widened
// to float for arithmetic and rounded back to nearest even, and a dispatch
// from an FNN_* dtype to the C++ type. Device code only (nvcc).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_ELEMENTTYPES_CUH
#define FASTNN_RUNTIME_CUDA_ELEMENTTYPES_CUH

#include "fastnn/runtime/abi.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace fastnn::cuda {

__device__ inline float toFloat(float X) { return X; }
__device__ inline float toFloat(__half X) { return __half2float(X); }
__device__ inline float toFloat(__nv_bfloat16 X) { return __bfloat162float(X); }
template <typename T> __device__ T fromFloat(float X);
template <> __device__ inline float fromFloat<float>(float X) { return X; }
template <> __device__ inline __half fromFloat<__half>(float X) {
  return __float2half_rn(X);
}
template <> __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float X) {
  return __float2bfloat16_rn(X);
}

/// The element type of an activation of \p DType, as a tag.
template <typename T> struct ElementType { using Type = T; };

/// Calls \p Launch with the ElementType of \p DType (float16, bfloat16,
/// else float32).
template <typename Fn> void withElementType(int64_t DType, Fn Launch) {
  switch (DType) {
  case FNN_F16:
    Launch(ElementType<__half>());
    break;
  case FNN_BF16:
    Launch(ElementType<__nv_bfloat16>());
    break;
  default:
    Launch(ElementType<float>());
  }
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_ELEMENTTYPES_CUH
