//===- NcclAllReduce.cpp - allreduces on the GPU with NCCL ----------------===//
//
// fastnn_device_allreduce_create for CUDA (fastnn/collectives/
// DeviceAllReduce.h): a bucket is reduced in device memory by
// ncclAllReduce on the device's communication stream, after an event the
// compute stream records at start; wait makes the compute stream wait for
// an event recorded after it. The host never waits, and the pattern (fork
// and join through events) is capturable in a CUDA graph.
//
// NCCL is loaded at run time (dlopen, like MPI), only here: in a job of
// several processes on CUDA devices. The first allreduce kernel sets up the
// process's NCCL communicator: every process says whether it could load
// NCCL and which GPU it has in one int64 allreduce, so all decide alike
// (NcclCensus.h); if one could not, or two share a GPU (NCCL refuses that),
// all stage through host memory over MPI instead, with one warning line.
// Otherwise rank 0's ncclUniqueId is broadcast over MPI and each process joins
// with ncclCommInitRank on its device.
//
// Float16 and bfloat16 are summed by NCCL in their own type, each addition
// of its ring or tree rounded to it, and a mean is ncclAvg (each value
// times 1/K, then summed): the same bits on every process, but not the CPU
// rule of abi.h (a float32 sum in rank order, rounded once).
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "NcclCensus.h"

#include "fastnn/collectives/DeviceAllReduce.h"
#include "fastnn/runtime/LastError.h"

#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

using fastnn::collectives::DeviceAllReduce;
using fastnn::collectives::DeviceJob;
using fastnn::cuda::KernelError;

namespace {

/// NCCL 2's soname, since 2.0; found through LD_LIBRARY_PATH (PyTorch's
/// site-packages/nvidia/nccl/lib) or the program's RUNPATH
/// (/usr/local/cuda/lib64).
constexpr const char *NcclLibraryName = "libnccl.so.2";
/// ncclAvg and ncclBfloat16 arrived in NCCL 2.10.
constexpr int NcclMinimumVersion = 21000;

struct NcclLibrary {
  decltype(&ncclGetVersion) GetVersion;
  decltype(&ncclGetUniqueId) GetUniqueId;
  decltype(&ncclCommInitRank) CommInitRank;
  decltype(&ncclAllReduce) AllReduce;
  decltype(&ncclGetErrorString) GetErrorString;
  decltype(&ncclGetLastError) GetLastError;

  std::string errorText(ncclResult_t Result, ncclComm_t Comm) const {
    std::string Text = GetErrorString(Result);
    const char *Last = GetLastError(Comm);
    if (Last && *Last)
      Text += std::string(" (") + Last + ")";
    return Text;
  }
};

template <typename T>
void resolve(void *Library, const char *Name, T &Into, std::string &Missing) {
  Into = reinterpret_cast<T>(dlsym(Library, Name));
  if (!Into && Missing.empty())
    Missing = Name;
}

/// Loads NCCL into Nccl; false with Reason, why this process cannot use it.
bool loadNccl(NcclLibrary &Nccl, std::string &Reason) {
  void *Library = dlopen(NcclLibraryName, RTLD_NOW | RTLD_LOCAL);
  if (!Library) {
    const char *Error = dlerror();
    Reason = std::string(NcclLibraryName) + " cannot be loaded (" +
             (Error ? Error : "no reason given") +
             "; PyTorch's wheels have it in site-packages/nvidia/nccl/lib: "
             "add that to LD_LIBRARY_PATH)";
    return false;
  }
  std::string Missing;
  resolve(Library, "ncclGetVersion", Nccl.GetVersion, Missing);
  resolve(Library, "ncclGetUniqueId", Nccl.GetUniqueId, Missing);
  resolve(Library, "ncclCommInitRank", Nccl.CommInitRank, Missing);
  resolve(Library, "ncclAllReduce", Nccl.AllReduce, Missing);
  resolve(Library, "ncclGetErrorString", Nccl.GetErrorString, Missing);
  resolve(Library, "ncclGetLastError", Nccl.GetLastError, Missing);
  if (!Missing.empty()) {
    Reason = std::string(NcclLibraryName) + " has no " + Missing;
    return false;
  }
  int Version = 0;
  if (Nccl.GetVersion(&Version) != ncclSuccess ||
      Version < NcclMinimumVersion) {
    Reason = std::string(NcclLibraryName) + " is version " +
             std::to_string(Version) + "; fastnn needs NCCL 2.10 or later";
    return false;
  }
  return true;
}

/// FNV-1a of this host's name and the device's PCI bus id, the same on
/// two processes exactly when they share a GPU; false with Reason.
bool gpuIdentity(int DeviceIndex, int64_t &Identity, std::string &Reason) {
  char Host[256] = {};
  gethostname(Host, sizeof(Host) - 1);
  char BusId[64] = {};
  if (cudaError_t E = cudaDeviceGetPCIBusId(BusId, sizeof(BusId), DeviceIndex);
      E != cudaSuccess) {
    Reason = std::string("cudaDeviceGetPCIBusId: ") + cudaGetErrorString(E);
    return false;
  }
  uint64_t Hash = 14695981039346656037ull;
  for (const char *Text :
       {static_cast<const char *>(Host), "/", static_cast<const char *>(BusId)})
    for (; *Text; ++Text)
      Hash = (Hash ^ static_cast<unsigned char>(*Text)) * 1099511628211ull;
  Identity = static_cast<int64_t>(Hash);
  return true;
}

/// The process's NCCL communicator, set up by the first allreduce kernel
/// (the ABI's global state, like the MPI communicator; never destroyed, as
/// a job's end may leave peers that would never answer ncclCommDestroy).
struct NcclJob {
  bool Decided = false;
  /// Null when the job stages through host memory.
  ncclComm_t Comm = nullptr;
  NcclLibrary Nccl{};
};

NcclJob &ncclJob() {
  static NcclJob *Job = new NcclJob();
  return *Job;
}

void warn(const DeviceJob &Job, const std::string &Why) {
  std::fprintf(stderr,
               "%s: warning: rank %d of %d: %s: gradients are reduced over "
               "MPI through host memory, synchronising at every bucket\n",
               Job.Program, Job.Rank, Job.Size, Why.c_str());
}

/// Decides, alike on every process, whether the job reduces with NCCL, and
/// joins it if so.
void setUp(NcclJob &Nccl, fnn_device &Device, const DeviceJob &Job) {
  // Slot r: rank r's GPU; the last: how many processes cannot use NCCL.
  // Every process takes part whatever it finds, so that none waits alone.
  std::vector<int64_t> Census(static_cast<size_t>(Job.Size) + 1, 0);
  std::string Reason;
  const bool Loaded =
      loadNccl(Nccl.Nccl, Reason) &&
      gpuIdentity(Device.Index, Census[static_cast<size_t>(Job.Rank)], Reason);
  Census.back() = Loaded ? 0 : 1;
  if (Job.AllReduceSum(Census.data(), static_cast<int64_t>(Census.size()),
                       FNN_I64) != 0)
    throw KernelError(std::string("the NCCL census: ") + fnn_last_error());
  const fastnn::cuda::NcclDecision Decision =
      fastnn::cuda::decideNccl(Census, Job.Rank, Loaded ? "" : Reason);
  if (!Decision.Warning.empty())
    warn(Job, Decision.Warning);
  if (!Decision.UseNccl)
    return;
  // Rank 0's id, and whether it could make one (so that no process waits
  // in a broadcast that never comes).
  struct {
    ncclUniqueId Id;
    int64_t Made;
  } Root = {};
  if (Job.Rank == 0)
    Root.Made = Nccl.Nccl.GetUniqueId(&Root.Id) == ncclSuccess;
  if (Job.Broadcast(&Root, sizeof(Root), 0) != 0)
    throw KernelError(std::string("broadcasting NCCL's unique id: ") +
                      fnn_last_error());
  if (!Root.Made)
    throw KernelError("rank 0 could not make NCCL's unique id");
  fastnn::cuda::check(cudaSetDevice(Device.Index), "cudaSetDevice");
  ncclComm_t Comm = nullptr;
  const ncclResult_t Joined =
      Nccl.Nccl.CommInitRank(&Comm, Job.Size, Root.Id, Job.Rank);
  int64_t Failed = Joined == ncclSuccess ? 0 : 1;
  if (Job.AllReduceSum(&Failed, 1, FNN_I64) != 0)
    throw KernelError(std::string("after ncclCommInitRank: ") +
                      fnn_last_error());
  if (Joined != ncclSuccess)
    throw KernelError("ncclCommInitRank: " +
                      Nccl.Nccl.errorText(Joined, nullptr));
  if (Failed > 0)
    throw KernelError("ncclCommInitRank failed on " + std::to_string(Failed) +
                      " of " + std::to_string(Job.Size) +
                      " processes (their messages say why)");
  Nccl.Comm = Comm;
}

class NcclAllReduce final : public DeviceAllReduce {
public:
  NcclAllReduce(fnn_device &Device, const NcclJob &Nccl, size_t Count,
                ncclDataType_t Type, ncclRedOp_t Op)
      : Device(Device), Nccl(Nccl), Count(Count), Type(Type), Op(Op) {
    fastnn::cuda::check(
        cudaEventCreateWithFlags(&Ready, cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
    fastnn::cuda::check(
        cudaEventCreateWithFlags(&Reduced, cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  }
  ~NcclAllReduce() override {
    cudaEventDestroy(Ready);
    cudaEventDestroy(Reduced);
  }

  void start(void *Buffer) override {
    using fastnn::cuda::succeeded;
    const char *Function = "fnn_allreduce_start";
    if (!succeeded(cudaEventRecord(Ready, Device.Compute), Function,
                   "cudaEventRecord") ||
        !succeeded(cudaStreamWaitEvent(Device.Communication, Ready, 0),
                   Function, "cudaStreamWaitEvent"))
      return;
    if (ncclResult_t Result = Nccl.Nccl.AllReduce(
            Buffer, Buffer, Count, Type, Op, Nccl.Comm, Device.Communication);
        Result != ncclSuccess) {
      fastnn::runtime::setLastError(
          std::string(Function) + ": ncclAllReduce of " +
          std::to_string(Count) +
          " elements: " + Nccl.Nccl.errorText(Result, Nccl.Comm));
      return;
    }
    succeeded(cudaEventRecord(Reduced, Device.Communication), Function,
              "cudaEventRecord");
  }

  void wait() override {
    fastnn::cuda::succeeded(cudaStreamWaitEvent(Device.Compute, Reduced, 0),
                            "fnn_allreduce_wait", "cudaStreamWaitEvent");
  }

private:
  fnn_device &Device;
  const NcclJob &Nccl;
  size_t Count;
  ncclDataType_t Type;
  ncclRedOp_t Op;
  cudaEvent_t Ready = nullptr, Reduced = nullptr;
};

ncclDataType_t ncclType(int64_t Dtype) {
  switch (Dtype) {
  case FNN_F32:
    return ncclFloat32;
  case FNN_F64:
    return ncclFloat64;
  case FNN_F16:
    return ncclFloat16;
  case FNN_BF16:
    return ncclBfloat16;
  }
  throw KernelError("NCCL reduces float32, float64, float16 and bfloat16 "
                    "tensors only");
}

} // namespace

extern "C" DeviceAllReduce *
fastnn_device_allreduce_create(fnn_device *Device, int64_t Count, int64_t Dtype,
                               bool Mean, const DeviceJob *Job) {
  const ncclDataType_t Type = ncclType(Dtype);
  NcclJob &Nccl = ncclJob();
  if (!Nccl.Decided) {
    Nccl.Decided = true;
    setUp(Nccl, *Device, *Job);
  }
  if (!Nccl.Comm)
    return nullptr;
  return new NcclAllReduce(*Device, Nccl, static_cast<size_t>(Count), Type,
                           Mean ? ncclAvg : ncclSum);
}
