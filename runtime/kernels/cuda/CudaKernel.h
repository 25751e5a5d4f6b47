//===- CudaKernel.h - the CUDA device and its kernels' base -----*- C++ -*-===//
//
// fnn_device on CUDA owns the device's streams (compute, copy,
// communication; all non-blocking, so the legacy default stream never
// serialises them), the cuDNN and cuBLASLt handles bound to the compute
// stream, and one workspace that every kernel's library call shares: the
// kernels run one after another on the compute stream, so one buffer,
// sized at create time to the largest need, serves all of them.
//
// Errors: a *_create throws (KernelError, with the library's own message)
// inside runtime::createKernel; a *_forward cannot fail loudly (the ABI has
// no status there), so a library call that fails records its message for
// fnn_last_error, which the drivers check after a step.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_CUDAKERNEL_H
#define FASTNN_RUNTIME_CUDA_CUDAKERNEL_H

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/KernelBase.h"
#include "fastnn/runtime/OpDescriptors.h"
#include "fastnn/runtime/Optimizer.h"
#include "fastnn/runtime/ShapeText.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct fnn_device {
  int Index = 0;
  cudaStream_t Compute = nullptr, Copy = nullptr, Communication = nullptr;
  cudnnHandle_t Cudnn = nullptr;
  cublasLtHandle_t CublasLt = nullptr;
  void *Workspace = nullptr;
  size_t WorkspaceBytes = 0;
  /// Pinned host slots fnn_input_next stages batches through (Device.cpp).
  struct InputRing;
  std::unique_ptr<InputRing> Input;

  fnn_device();
  ~fnn_device();
};

namespace fastnn::cuda {

using runtime::checkF32;
using runtime::checkFloatType;
using runtime::checkLayout;
using runtime::checkPostOp;
using runtime::checkShape;
using runtime::formatPair;
using runtime::KernelError;
using runtime::layoutName;
using runtime::shapeText;

/// The workspace every kernel starts with (cuBLASLt's heuristics want a
/// few MiB; convolutions grow it at create when their algorithm needs more).
constexpr size_t InitialWorkspaceBytes = size_t(32) << 20;

/// Throws a KernelError "what: <library message>" unless the call succeeded.
void check(cudaError_t Status, const char *What);
void check(cudnnStatus_t Status, const char *What);
void check(cublasStatus_t Status, const char *What);
/// At run time: records "Function: What: <message>" for fnn_last_error and
/// returns false unless the call succeeded.
bool succeeded(cudaError_t Status, const char *Function, const char *What);
bool succeeded(cudnnStatus_t Status, const char *Function, const char *What);
bool succeeded(cublasStatus_t Status, const char *Function, const char *What);

/// Grows the device's workspace to at least \p Bytes (create time only: it
/// synchronises the device to free the old one).
void reserveWorkspace(fnn_device &Device, size_t Bytes);

/// Device memory owned by a kernel, allocated at create.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t Bytes);
  DeviceBuffer(DeviceBuffer &&Other) noexcept : Pointer(Other.Pointer) {
    Other.Pointer = nullptr;
  }
  DeviceBuffer &operator=(DeviceBuffer &&Other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();
  void *get() const { return Pointer; }

private:
  void *Pointer = nullptr;
};

/// Every CUDA kernel: it knows its device.
struct CudaKernel : fnn_kernel {
  explicit CudaKernel(fnn_device &Device) : Device(Device) {}
  fnn_device &Device;
};

/// Throws unless \p Forward, the training kernel a backward kernel reads
/// (made from \p ForwardDesc), belongs to \p Device and was made from the
/// backward's own descriptor \p D.
template <typename DescT>
void checkForwardMatches(const CudaKernel &Forward, const DescT &ForwardDesc,
                         const fnn_device &Device, const DescT &D) {
  if (&Forward.Device != &Device)
    throw KernelError("the forward kernel belongs to another device");
  if (std::memcmp(&ForwardDesc, &D, sizeof(D)) != 0)
    throw KernelError("the forward kernel was made from a different "
                      "descriptor");
}

/// A cuDNN descriptor with its destroy function.
template <typename T, cudnnStatus_t (*Destroy)(T)> class CudnnDescriptor {
public:
  CudnnDescriptor() = default;
  explicit CudnnDescriptor(cudnnStatus_t (*Create)(T *)) {
    check(Create(&Handle), "cuDNN descriptor");
  }
  CudnnDescriptor(CudnnDescriptor &&Other) noexcept : Handle(Other.Handle) {
    Other.Handle = nullptr;
  }
  CudnnDescriptor &operator=(CudnnDescriptor &&Other) noexcept {
    std::swap(Handle, Other.Handle);
    return *this;
  }
  CudnnDescriptor(const CudnnDescriptor &) = delete;
  CudnnDescriptor &operator=(const CudnnDescriptor &) = delete;
  ~CudnnDescriptor() {
    if (Handle)
      Destroy(Handle);
  }
  T get() const { return Handle; }

private:
  T Handle = nullptr;
};

using TensorDescriptor =
    CudnnDescriptor<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnDescriptor<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t,
                    cudnnDestroyConvolutionDescriptor>;
using ActivationDescriptor = CudnnDescriptor<cudnnActivationDescriptor_t,
                                             cudnnDestroyActivationDescriptor>;
using ReduceDescriptor = CudnnDescriptor<cudnnReduceTensorDescriptor_t,
                                         cudnnDestroyReduceTensorDescriptor>;

cudnnDataType_t cudnnType(int64_t DType);
/// Bytes of one element of a kernel's floating-point type.
size_t elementBytes(int64_t DType);
int64_t numElements(const fnn_shape &Shape);

/// A 4-D activation N, C, H, W given in \p Layout's order.
TensorDescriptor activationDescriptor(const fnn_shape &Shape, int64_t Layout,
                                      int64_t DType);
/// A dense row-major tensor of \p Dims (4 to 8 of them: cuDNN's Nd
/// descriptors want at least 4, so lower ranks are padded with 1s in
/// front).
TensorDescriptor denseDescriptor(std::vector<int> Dims, int64_t DType);
/// The float32 per-channel 1 x C x 1 x 1 tensor of batch norm's scale,
/// shift and statistics.
TensorDescriptor channelDescriptor(int64_t Channels);
/// cuDNN's activation for FNN_POST_RELU (clipping above at infinity) or
/// FNN_POST_RELU6 (clipping at 6).
ActivationDescriptor activationDescriptor(int64_t Activation);

/// The scaling factors cuDNN reads on the host: float for float and half
/// data, as its API asks.
extern const float One, Zero;

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_CUDAKERNEL_H
