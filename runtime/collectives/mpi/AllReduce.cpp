//===- AllReduce.cpp - fnn_allreduce_* on CPU over MPI --------------------===//
//
// An allreduce kernel holds its job (count, type, sum or mean); start hands
// it with the bucket's address to the communicator's thread, wait blocks
// until that thread is done with it. In a job of one process both return
// at once: the sum and the mean over one process are the input. Float16
// and bfloat16 buckets are reduced in their own type (Communicator.h).
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"

#include "fastnn/runtime/KernelBase.h"

using fastnn::collectives::AllReduceJob;
using fastnn::collectives::Communicator;
using fastnn::runtime::KernelError;

namespace {

/// Not a kernel of the device's backend but one of its own, so that
/// fnn_kernel_destroy frees it like any other.
struct AllReduceKernel final : fnn_kernel {
  AllReduceJob Job;
};

AllReduceJob &jobOf(fnn_kernel *Kernel) {
  return static_cast<AllReduceKernel *>(Kernel)->Job;
}

} // namespace

extern "C" fnn_kernel *fnn_allreduce_create(fnn_device *Device,
                                            const fnn_allreduce_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_allreduce_create", Device, Desc,
      [Device](const fnn_allreduce_desc &D) {
        // MPI reads and writes the bucket in place: device memory that only
        // fnn_copy_* reach needs another collective backend (NCCL on CUDA).
        if (!fnn_device_host_addressable(Device))
          throw KernelError("the MPI backend reduces host-addressable "
                            "device memory only");
        if (D.count < 0)
          throw KernelError("negative count");
        if (D.op != FNN_ALLREDUCE_SUM && D.op != FNN_ALLREDUCE_MEAN)
          throw KernelError("op " + std::to_string(D.op) +
                            " is neither sum nor mean");
        Communicator &Comm = Communicator::get();
        if (D.dtype != FNN_F32 && D.dtype != FNN_F64 && D.dtype != FNN_F16 &&
            D.dtype != FNN_BF16)
          throw KernelError("the MPI backend reduces float32, float64, "
                            "float16 and bfloat16 tensors only");
        auto Kernel = std::make_unique<AllReduceKernel>();
        Kernel->Job.Count = D.count;
        Kernel->Job.Dtype = D.dtype;
        Kernel->Job.Mean = D.op == FNN_ALLREDUCE_MEAN;
        Comm.reserve(D.count, D.dtype);
        return Kernel;
      },
      [](const fnn_allreduce_desc &D) {
        return std::to_string(D.count) + " elements of dtype " +
               std::to_string(D.dtype) + ", op " + std::to_string(D.op);
      });
}

extern "C" void fnn_allreduce_start(fnn_kernel *Kernel, void *Buffer) {
  Communicator &Comm = Communicator::get();
  if (Comm.size() == 1)
    return;
  AllReduceJob &Job = jobOf(Kernel);
  Job.Buffer = Buffer;
  Comm.start(Job);
}

extern "C" void fnn_allreduce_wait(fnn_kernel *Kernel) {
  Communicator &Comm = Communicator::get();
  if (Comm.size() == 1)
    return;
  Comm.wait(jobOf(Kernel));
}
