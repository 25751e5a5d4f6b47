//===- Reduction.cpp - fnn_reduce on CUDA (cuDNN) -------------------------===//
//
// cudnnReduceTensor (sum, mean as CUDNN_REDUCE_TENSOR_AVG, max, min) from
// the input to the output of the same rank with the reduced dimensions 1;
// its workspace is the device's, reserved at create. A reduction over
// nothing (every reduced dimension already 1) is a copy.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"

using namespace fastnn::cuda;

namespace {

struct ReduceKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  TensorDescriptor Input, Output;
  ReduceDescriptor Reduce;
  bool Reduces = false;
  size_t Bytes = 0, WorkspaceBytes = 0;
};

std::vector<int> dimsOf(const fnn_shape &Shape) {
  std::vector<int> Dims;
  for (int64_t I = 0; I < Shape.rank; ++I) {
    if (Shape.dims[I] > INT32_MAX)
      throw KernelError("a dimension above cuDNN's 2^31 limit");
    Dims.push_back(static_cast<int>(Shape.dims[I]));
  }
  return Dims;
}

} // namespace

extern "C" fnn_kernel *fnn_reduce_create(fnn_device *Device,
                                         const fnn_reduce_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_reduce_create", Device, Desc,
      [Device](const fnn_reduce_desc &D) {
        auto K = std::make_unique<ReduceKernel>(*Device);
        K->Reduces = fastnn::runtime::checkReduceShapes(D);
        cudnnReduceTensorOp_t Op;
        switch (D.kind) {
        case FNN_REDUCE_SUM:
          Op = CUDNN_REDUCE_TENSOR_ADD;
          break;
        case FNN_REDUCE_MEAN:
          Op = CUDNN_REDUCE_TENSOR_AVG;
          break;
        case FNN_REDUCE_MAX:
          Op = CUDNN_REDUCE_TENSOR_MAX;
          break;
        case FNN_REDUCE_MIN:
          Op = CUDNN_REDUCE_TENSOR_MIN;
          break;
        default:
          throw KernelError("unknown reduction kind " + std::to_string(D.kind));
        }
        K->Bytes = static_cast<size_t>(numElements(D.output)) * sizeof(float);
        if (!K->Reduces)
          return K;
        K->Input = denseDescriptor(dimsOf(D.input), FNN_F32);
        K->Output = denseDescriptor(dimsOf(D.output), FNN_F32);
        K->Reduce = ReduceDescriptor(cudnnCreateReduceTensorDescriptor);
        check(cudnnSetReduceTensorDescriptor(
                  K->Reduce.get(), Op, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                  CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES),
              "cudnnSetReduceTensorDescriptor");
        check(cudnnGetReductionWorkspaceSize(Device->Cudnn, K->Reduce.get(),
                                             K->Input.get(), K->Output.get(),
                                             &K->WorkspaceBytes),
              "cudnnGetReductionWorkspaceSize");
        reserveWorkspace(*Device, K->WorkspaceBytes);
        return K;
      },
      fastnn::runtime::describeReduce);
}

extern "C" void fnn_reduce_forward(fnn_kernel *Handle, const void *Input,
                                   void *Output) {
  auto &K = static_cast<ReduceKernel &>(*Handle);
  const char *Function = "fnn_reduce_forward";
  if (!K.Reduces) {
    succeeded(cudaMemcpyAsync(Output, Input, K.Bytes, cudaMemcpyDeviceToDevice,
                              K.Device.Compute),
              Function, "cudaMemcpyAsync");
    return;
  }
  succeeded(cudnnReduceTensor(K.Device.Cudnn, K.Reduce.get(), nullptr, 0,
                              K.Device.Workspace, K.WorkspaceBytes, &One,
                              K.Input.get(), Input, &Zero, K.Output.get(),
                              Output),
            Function, "cudnnReduceTensor");
}
