//===- DeviceAllReduce.h - allreduces a backend runs itself -----*- C++ -*-===//
//
// fnn_allreduce_* (runtime/collectives/mpi/AllReduce.cpp) reduce in host
// memory over MPI. A backend whose memory MPI cannot reach may reduce on
// its device instead (the CUDA one, with NCCL): it defines
// fastnn_device_allreduce_create, which the collectives reference weakly,
// so that the collectives library links no device library and a CPU
// program, where it is absent, resolves it to null and stages nothing.
// The backend's link line names it with --undefined, which takes the
// defining object out of the backend's archive. The job's collectives
// reach the backend as function pointers (DeviceJob), so its library needs
// no collectives library either (infer.bin links it without one).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_COLLECTIVES_DEVICEALLREDUCE_H
#define FASTNN_COLLECTIVES_DEVICEALLREDUCE_H

#include "fastnn/runtime/abi.h"

#include <cstddef>
#include <cstdint>

namespace fastnn::collectives {

/// The job as a device collective bootstraps over it: the communicator's
/// host collectives (abi.h's fnn_comm_broadcast and fnn_comm_allreduce_sum).
struct DeviceJob {
  int Rank = 0, Size = 1;
  /// The program's name, for its one warning line.
  const char *Program = "fastnn";
  int64_t (*Broadcast)(void *Buffer, size_t Bytes, int64_t Root) = nullptr;
  int64_t (*AllReduceSum)(void *Buffer, int64_t Count, int64_t Dtype) = nullptr;
};

/// One allreduce kernel's reduction on the device's own streams: start
/// and wait enqueue only (the host never waits), and record a failure for
/// fnn_last_error as the device's kernels do.
class DeviceAllReduce {
public:
  virtual ~DeviceAllReduce() = default;
  virtual void start(void *Buffer) = 0;
  virtual void wait() = 0;
};

} // namespace fastnn::collectives

/// The device's reduction of Count elements of Dtype (sum, or mean when
/// Mean), owned by the caller; every process of a job of several calls it
/// for the same kernels in the same order. Null when the device cannot
/// reduce for this job (its library is missing, processes share a device:
/// the backend has printed one warning line, and every process of the job
/// decides alike), the caller then stages through host memory. Throws
/// fastnn::runtime::KernelError when the device library fails.
extern "C" fastnn::collectives::DeviceAllReduce *
fastnn_device_allreduce_create(fnn_device *Device, int64_t Count, int64_t Dtype,
                               bool Mean,
                               const fastnn::collectives::DeviceJob *Job);

#endif // FASTNN_COLLECTIVES_DEVICEALLREDUCE_H
