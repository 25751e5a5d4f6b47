//===- NcclCensus.h - whether a job reduces with NCCL -----------*- C++ -*-===//
//
// The decision NcclAllReduce.cpp's set-up takes from the census that every
// process of the job gathers in one int64 allreduce: slot r holds rank r's
// GPU (a hash of host name and PCI bus id; 0 from a rank that cannot use
// NCCL), the last slot the number of ranks that cannot. Every process sees
// the same census and so takes the same branch. No CUDA here, so that host
// tests check it.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_NCCLCENSUS_H
#define FASTNN_RUNTIME_CUDA_NCCLCENSUS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::cuda {

struct NcclDecision {
  bool UseNccl = false;
  /// This process's warning line (empty: it says nothing). A process that
  /// cannot use NCCL says why; rank 0 speaks for the job.
  std::string Warning;
};

/// OwnReason: why this process cannot use NCCL (empty if it can).
inline NcclDecision decideNccl(const std::vector<int64_t> &Census, int Rank,
                               const std::string &OwnReason) {
  const int Size = static_cast<int>(Census.size()) - 1;
  const int64_t Unable = Census.back();
  if (!OwnReason.empty())
    return {false, OwnReason};
  if (Unable > 0)
    return {false, Rank == 0
                       ? std::to_string(Unable) + " of " +
                             std::to_string(Size) + " processes cannot use NCCL"
                       : ""};
  for (int I = 0; I < Size; ++I)
    for (int J = I + 1; J < Size; ++J)
      if (Census[static_cast<size_t>(I)] == Census[static_cast<size_t>(J)])
        return {false, Rank == 0 ? "ranks " + std::to_string(I) + " and " +
                                       std::to_string(J) +
                                       " use the same GPU, and NCCL needs "
                                       "one GPU per process"
                                 : ""};
  return {true, ""};
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_NCCLCENSUS_H
