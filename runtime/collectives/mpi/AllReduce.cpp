//===- AllReduce.cpp - fnn_allreduce_* on CPU over MPI --------------------===//
//
// An allreduce kernel holds its job (count, type, sum or mean); start hands
// it with the bucket's address to the communicator's thread, wait blocks
// until that thread is done with it. In a job of one process both return
// at once: the sum and the mean over one process are the input. Float16
// and bfloat16 buckets are reduced in their own type (Communicator.h).
// Device memory MPI cannot reach (CUDA's) is reduced by the device's own
// collective where its backend has one and the job can use it (NCCL:
// fastnn/collectives/DeviceAllReduce.h); otherwise it is staged through a
// host buffer the kernel makes at create: start copies the bucket out,
// wait copies the result back. Those copies wait for the device, so a
// staged job synchronises at each bucket.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"

#include "fastnn/collectives/DeviceAllReduce.h"
#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/KernelBase.h"

#include <memory>
#include <vector>

// Null unless the program links a backend that defines it.
extern "C" __attribute__((weak)) fastnn::collectives::DeviceAllReduce *
fastnn_device_allreduce_create(fnn_device *Device, int64_t Count, int64_t Dtype,
                               bool Mean,
                               const fastnn::collectives::DeviceJob *Job);

using fastnn::collectives::AllReduceJob;
using fastnn::collectives::Communicator;
using fastnn::runtime::KernelError;

namespace {

/// Not a kernel of the device's backend but one of its own, so that
/// fnn_kernel_destroy frees it like any other.
struct AllReduceKernel final : fnn_kernel {
  AllReduceJob Job;
  /// The device's own reduction, where it has one.
  std::unique_ptr<fastnn::collectives::DeviceAllReduce> OnDevice;
  /// Where the bucket is reduced when MPI cannot reach the device's memory
  /// (empty otherwise), and the device bucket it stands for.
  std::vector<unsigned char> Staging;
  fnn_device *StagingDevice = nullptr;
  void *DeviceBuffer = nullptr;
};

AllReduceKernel &kernelOf(fnn_kernel *Kernel) {
  return *static_cast<AllReduceKernel *>(Kernel);
}

} // namespace

extern "C" fnn_kernel *fnn_allreduce_create(fnn_device *Device,
                                            const fnn_allreduce_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_allreduce_create", Device, Desc,
      [Device](const fnn_allreduce_desc &D) {
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
        if (Comm.size() > 1 && !fnn_device_host_addressable(Device)) {
          if (fastnn_device_allreduce_create) {
            fastnn::collectives::DeviceJob Job;
            Job.Rank = Comm.rank();
            Job.Size = Comm.size();
            Job.Program = Comm.program().c_str();
            Job.Broadcast = fnn_comm_broadcast;
            Job.AllReduceSum = fnn_comm_allreduce_sum;
            Kernel->OnDevice.reset(fastnn_device_allreduce_create(
                Device, D.count, D.dtype, Kernel->Job.Mean, &Job));
            if (Kernel->OnDevice)
              return Kernel;
          }
          Kernel->Staging.resize(static_cast<size_t>(D.count) *
                                 fastnn::runtime::dtypeBytes(D.dtype));
          Kernel->StagingDevice = Device;
        }
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
  AllReduceKernel &AllReduce = kernelOf(Kernel);
  if (AllReduce.OnDevice) {
    AllReduce.OnDevice->start(Buffer);
    return;
  }
  AllReduce.Job.Buffer = Buffer;
  if (AllReduce.StagingDevice) {
    AllReduce.DeviceBuffer = Buffer;
    fnn_copy_to_host(AllReduce.StagingDevice, AllReduce.Staging.data(), Buffer,
                     AllReduce.Staging.size());
    AllReduce.Job.Buffer = AllReduce.Staging.data();
  }
  Comm.start(AllReduce.Job);
}

extern "C" void fnn_allreduce_wait(fnn_kernel *Kernel) {
  Communicator &Comm = Communicator::get();
  if (Comm.size() == 1)
    return;
  AllReduceKernel &AllReduce = kernelOf(Kernel);
  if (AllReduce.OnDevice) {
    AllReduce.OnDevice->wait();
    return;
  }
  Comm.wait(AllReduce.Job);
  if (AllReduce.StagingDevice)
    fnn_copy_to_device(AllReduce.StagingDevice, AllReduce.DeviceBuffer,
                       AllReduce.Staging.data(), AllReduce.Staging.size());
}
