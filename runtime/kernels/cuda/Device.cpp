//===- Device.cpp - the CUDA device: streams, handles, memory, input ------===//
//
// fnn_device_create binds the calling thread to the GPU (cudaSetDevice): the
// compiled step and the trainer call the runtime from that thread. Copies
// between host and device (fnn_copy_to_device / fnn_copy_to_host) are for
// init, checkpoints and the drivers' staging, not for the step: they are
// enqueued on the compute stream, so they see every kernel enqueued before
// them, and return when done (synchronous for the caller).
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"

#include "fastnn/runtime/BackendHooks.h"

#include <array>
#include <cstdio>
#include <cstdlib>

using namespace fastnn::cuda;
using fastnn::runtime::clearLastError;
using fastnn::runtime::setLastError;

/// Two pinned slots, used in turn: the source fills one while the copy of
/// the other may still run; each slot's event says when its last copy is
/// done. Allocated at the first fnn_input_next (the sizes are known only
/// then), i.e. in the warm-up step, never while a graph is captured.
struct fnn_device::InputRing {
  struct Slot {
    void *Host = nullptr;
    cudaEvent_t Done = nullptr;
  };
  std::array<Slot, 2> Slots;
  size_t ImagesBytes = 0, LabelsOffset = 0, LabelsBytes = 0;
  unsigned Next = 0;

  ~InputRing() {
    for (Slot &S : Slots) {
      if (S.Done)
        cudaEventDestroy(S.Done);
      if (S.Host)
        cudaFreeHost(S.Host);
    }
  }
};

namespace {

[[noreturn]] void inputFailure(const std::string &Reason) {
  // As a source that cannot deliver does: the step cannot go on.
  std::fprintf(stderr, "fnn_input_next: error: %s\n", Reason.c_str());
  std::exit(1);
}

/// fnn_input_next on CUDA: the source writes a pinned slot, which is copied
/// to the step's inputs on the compute stream (ordered before the kernels
/// that read them).
void deliverInput(void *Context, fnn_input_source Source, void *SourceContext,
                  void *Images, void *Labels) {
  auto &Device = *static_cast<fnn_device *>(Context);
  size_t ImagesBytes = fastnn::runtime::inputImagesBytes();
  size_t LabelsBytes = fastnn::runtime::inputLabelsBytes();
  if (!ImagesBytes || !LabelsBytes)
    inputFailure("the sizes of the step's inputs are not known (a driver of "
                 "a CUDA step calls fastnn::runtime::setInputBytes beside "
                 "fnn_input_set_source)");
  if (!Device.Input || Device.Input->ImagesBytes != ImagesBytes ||
      Device.Input->LabelsBytes != LabelsBytes) {
    Device.Input = std::make_unique<fnn_device::InputRing>();
    fnn_device::InputRing &Ring = *Device.Input;
    Ring.ImagesBytes = ImagesBytes;
    Ring.LabelsBytes = LabelsBytes;
    Ring.LabelsOffset = (ImagesBytes + 63) / 64 * 64;
    for (auto &Slot : Ring.Slots) {
      cudaError_t E = cudaHostAlloc(&Slot.Host, Ring.LabelsOffset + LabelsBytes,
                                    cudaHostAllocDefault);
      if (E == cudaSuccess)
        E = cudaEventCreateWithFlags(&Slot.Done, cudaEventDisableTiming);
      if (E != cudaSuccess)
        inputFailure(std::string("pinned staging buffers: ") +
                     cudaGetErrorString(E));
    }
  }
  fnn_device::InputRing &Ring = *Device.Input;
  fnn_device::InputRing::Slot &Slot = Ring.Slots[Ring.Next];
  Ring.Next ^= 1;
  cudaError_t E = cudaEventSynchronize(Slot.Done);
  if (E != cudaSuccess)
    inputFailure(std::string("waiting for a staging copy: ") +
                 cudaGetErrorString(E));
  auto *Host = static_cast<char *>(Slot.Host);
  Source(SourceContext, Host, Host + Ring.LabelsOffset);
  E = cudaMemcpyAsync(Images, Host, ImagesBytes, cudaMemcpyHostToDevice,
                      Device.Compute);
  if (E == cudaSuccess)
    E = cudaMemcpyAsync(Labels, Host + Ring.LabelsOffset, LabelsBytes,
                        cudaMemcpyHostToDevice, Device.Compute);
  if (E == cudaSuccess)
    E = cudaEventRecord(Slot.Done, Device.Compute);
  if (E != cudaSuccess)
    inputFailure(std::string("copying a batch to the device: ") +
                 cudaGetErrorString(E));
}

/// While spans are recorded, each timestamp waits for the compute stream:
/// the span of an op is then its device time (recording serialises the
/// step, which is what a timeline run accepts).
void fenceTrace(void *Context) {
  cudaStreamSynchronize(static_cast<fnn_device *>(Context)->Compute);
}

} // namespace

fnn_device::fnn_device() = default;

fnn_device::~fnn_device() {
  fastnn::runtime::clearInputDelivery(this);
  fastnn::runtime::clearTraceFence(this);
  cudaDeviceSynchronize();
  Input.reset();
  if (CublasLt)
    cublasLtDestroy(CublasLt);
  if (Cudnn)
    cudnnDestroy(Cudnn);
  for (cudaStream_t S : {Compute, Copy, Communication})
    if (S)
      cudaStreamDestroy(S);
  if (Workspace)
    cudaFree(Workspace);
}

extern "C" fnn_device *fnn_device_create(int64_t Kind, int64_t Index) {
  clearLastError();
  if (Kind != FNN_DEVICE_CUDA) {
    setLastError("fnn_device_create: device kind " + std::to_string(Kind) +
                 " is not available in the CUDA runtime");
    return nullptr;
  }
  // Without a GPU or a driver this is the first call that fails, with the
  // runtime's reason (e.g. "CUDA driver version is insufficient").
  int Count = 0;
  cudaError_t E = cudaGetDeviceCount(&Count);
  if (E == cudaSuccess && Count == 0)
    E = cudaErrorNoDevice;
  if (E != cudaSuccess) {
    cudaGetLastError();
    setLastError(std::string("fnn_device_create: no CUDA device: ") +
                 cudaGetErrorString(E));
    return nullptr;
  }
  if (Index < 0 || Index >= Count) {
    setLastError("fnn_device_create: CUDA device index " +
                 std::to_string(Index) + " does not exist (" +
                 std::to_string(Count) + " devices)");
    return nullptr;
  }
  try {
    auto Device = std::make_unique<fnn_device>();
    Device->Index = static_cast<int>(Index);
    check(cudaSetDevice(Device->Index), "cudaSetDevice");
    for (cudaStream_t *S :
         {&Device->Compute, &Device->Copy, &Device->Communication})
      check(cudaStreamCreateWithFlags(S, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags");
    check(cudnnCreate(&Device->Cudnn), "cudnnCreate");
    check(cudnnSetStream(Device->Cudnn, Device->Compute), "cudnnSetStream");
    check(cublasLtCreate(&Device->CublasLt), "cublasLtCreate");
    reserveWorkspace(*Device, InitialWorkspaceBytes);
    fastnn::runtime::setInputDelivery(deliverInput, Device.get());
    fastnn::runtime::setTraceFence(fenceTrace, Device.get());
    return Device.release();
  } catch (const std::exception &Ex) {
    setLastError(std::string("fnn_device_create: ") + Ex.what());
  }
  return nullptr;
}

extern "C" void fnn_device_destroy(fnn_device *Device) { delete Device; }

extern "C" void *fnn_device_alloc(fnn_device *Device, size_t Bytes) {
  (void)Device;
  clearLastError();
  // cudaMalloc aligns to 256 bytes; a zero-byte request still gets a
  // distinct pointer.
  void *Memory = nullptr;
  cudaError_t E = cudaMalloc(&Memory, Bytes ? Bytes : 1);
  if (E != cudaSuccess) {
    setLastError("fnn_device_alloc: allocating " + std::to_string(Bytes) +
                 " bytes: " + cudaGetErrorString(E));
    return nullptr;
  }
  return Memory;
}

extern "C" void fnn_device_free(fnn_device *Device, void *Memory) {
  (void)Device;
  if (Memory)
    cudaFree(Memory);
}

namespace {
void copy(fnn_device *Device, void *Dst, const void *Src, size_t Bytes,
          cudaMemcpyKind Kind, const char *Function) {
  if (!Bytes)
    return;
  if (succeeded(cudaMemcpyAsync(Dst, Src, Bytes, Kind, Device->Compute),
                Function, "cudaMemcpyAsync"))
    succeeded(cudaStreamSynchronize(Device->Compute), Function,
              "cudaStreamSynchronize");
}
} // namespace

extern "C" void fnn_copy_to_device(fnn_device *Device, void *Dst,
                                   const void *Src, size_t Bytes) {
  copy(Device, Dst, Src, Bytes, cudaMemcpyHostToDevice, "fnn_copy_to_device");
}

extern "C" void fnn_copy_to_host(fnn_device *Device, void *Dst, const void *Src,
                                 size_t Bytes) {
  copy(Device, Dst, Src, Bytes, cudaMemcpyDeviceToHost, "fnn_copy_to_host");
}

extern "C" void fnn_device_synchronize(fnn_device *Device) {
  (void)Device;
  succeeded(cudaDeviceSynchronize(), "fnn_device_synchronize",
            "cudaDeviceSynchronize");
}

extern "C" int64_t fnn_device_default_kind(void) { return FNN_DEVICE_CUDA; }

extern "C" int64_t fnn_device_host_addressable(fnn_device *Device) {
  (void)Device;
  return 0;
}

extern "C" void fnn_parallel_for(fnn_loop_body Body, void *Context,
                                 int64_t Count, int64_t Work) {
  // Host loop nests are the CPU backend's; a CUDA step runs its nests as
  // device kernels (fnn_gpu_launch). Drivers and tests that still call it
  // get the nest run on the calling thread.
  (void)Work;
  if (Count > 0)
    Body(Context, 0, Count);
}
