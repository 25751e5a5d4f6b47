//===- CudaKernel.cpp - error checks, buffers and cuDNN descriptors -------===//

#include "CudaKernel.h"

#include <cfloat>

namespace fastnn::cuda {

const float One = 1.f, Zero = 0.f;

void check(cudaError_t Status, const char *What) {
  if (Status != cudaSuccess)
    throw KernelError(std::string(What) + ": " + cudaGetErrorString(Status));
}

void check(cudnnStatus_t Status, const char *What) {
  if (Status != CUDNN_STATUS_SUCCESS)
    throw KernelError(std::string(What) + ": " + cudnnGetErrorString(Status));
}

void check(cublasStatus_t Status, const char *What) {
  if (Status != CUBLAS_STATUS_SUCCESS)
    throw KernelError(std::string(What) + ": " +
                      cublasLtGetStatusString(Status));
}

bool succeeded(cudaError_t Status, const char *Function, const char *What) {
  if (Status == cudaSuccess)
    return true;
  runtime::setLastError(std::string(Function) + ": " + What + ": " +
                        cudaGetErrorString(Status));
  return false;
}

bool succeeded(cudnnStatus_t Status, const char *Function, const char *What) {
  if (Status == CUDNN_STATUS_SUCCESS)
    return true;
  runtime::setLastError(std::string(Function) + ": " + What + ": " +
                        cudnnGetErrorString(Status));
  return false;
}

bool succeeded(cublasStatus_t Status, const char *Function, const char *What) {
  if (Status == CUBLAS_STATUS_SUCCESS)
    return true;
  runtime::setLastError(std::string(Function) + ": " + What + ": " +
                        cublasLtGetStatusString(Status));
  return false;
}

void reserveWorkspace(fnn_device &Device, size_t Bytes) {
  if (Bytes <= Device.WorkspaceBytes)
    return;
  void *Grown = nullptr;
  check(cudaMalloc(&Grown, Bytes), "allocating the device workspace");
  // Kernels read Device.Workspace at every call, so none holds the old one;
  // work already enqueued may still use it until the device is idle.
  check(cudaDeviceSynchronize(), "growing the device workspace");
  cudaFree(Device.Workspace);
  Device.Workspace = Grown;
  Device.WorkspaceBytes = Bytes;
}

DeviceBuffer::DeviceBuffer(size_t Bytes) {
  check(cudaMalloc(&Pointer, Bytes ? Bytes : 1), "allocating kernel state");
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&Other) noexcept {
  std::swap(Pointer, Other.Pointer);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (Pointer)
    cudaFree(Pointer);
}

cudnnDataType_t cudnnType(int64_t DType) {
  switch (DType) {
  case FNN_F16:
    return CUDNN_DATA_HALF;
  case FNN_BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

size_t elementBytes(int64_t DType) { return DType == FNN_F32 ? 4 : 2; }

int64_t numElements(const fnn_shape &Shape) {
  int64_t N = 1;
  for (int64_t I = 0; I < Shape.rank; ++I)
    N *= Shape.dims[I];
  return N;
}

TensorDescriptor activationDescriptor(const fnn_shape &Shape, int64_t Layout,
                                      int64_t DType) {
  TensorDescriptor T(cudnnCreateTensorDescriptor);
  bool Nhwc = Layout == FNN_NHWC;
  const int64_t *D = Shape.dims;
  int N = static_cast<int>(D[0]);
  int C = static_cast<int>(D[Nhwc ? 3 : 1]);
  int H = static_cast<int>(D[Nhwc ? 1 : 2]);
  int W = static_cast<int>(D[Nhwc ? 2 : 3]);
  check(cudnnSetTensor4dDescriptor(T.get(),
                                   Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                   cudnnType(DType), N, C, H, W),
        "cudnnSetTensor4dDescriptor");
  return T;
}

TensorDescriptor denseDescriptor(std::vector<int> Dims, int64_t DType) {
  while (Dims.size() < 4)
    Dims.insert(Dims.begin(), 1);
  if (Dims.size() > CUDNN_DIM_MAX)
    throw KernelError("rank above cuDNN's limit");
  std::vector<int> Strides(Dims.size());
  int Stride = 1;
  for (size_t I = Dims.size(); I-- > 0;) {
    Strides[I] = Stride;
    Stride *= Dims[I];
  }
  TensorDescriptor T(cudnnCreateTensorDescriptor);
  check(cudnnSetTensorNdDescriptor(T.get(), cudnnType(DType),
                                   static_cast<int>(Dims.size()), Dims.data(),
                                   Strides.data()),
        "cudnnSetTensorNdDescriptor");
  return T;
}

TensorDescriptor channelDescriptor(int64_t Channels) {
  TensorDescriptor T(cudnnCreateTensorDescriptor);
  check(cudnnSetTensor4dDescriptor(T.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                   1, static_cast<int>(Channels), 1, 1),
        "cudnnSetTensor4dDescriptor");
  return T;
}

ActivationDescriptor activationDescriptor(int64_t Activation) {
  ActivationDescriptor A(cudnnCreateActivationDescriptor);
  bool Relu6 = Activation == FNN_POST_RELU6;
  check(cudnnSetActivationDescriptor(
            A.get(),
            Relu6 ? CUDNN_ACTIVATION_CLIPPED_RELU : CUDNN_ACTIVATION_RELU,
            CUDNN_NOT_PROPAGATE_NAN, Relu6 ? 6.0 : DBL_MAX),
        "cudnnSetActivationDescriptor");
  return A;
}

} // namespace fastnn::cuda
