//===- Device.cpp - the CPU device: oneDNN engine and stream --------------===//

#include "Kernel.h"

#include <cstring>

using namespace fastnn::cpu;

extern "C" fnn_device *fnn_device_create(int64_t Kind, int64_t Index) {
  clearLastError();
  if (Kind != FNN_DEVICE_CPU) {
    setLastError("fnn_device_create: device kind " + std::to_string(Kind) +
                 " is not available in the CPU runtime");
    return nullptr;
  }
  if (Index != 0) {
    setLastError("fnn_device_create: CPU device index " +
                 std::to_string(Index) + " does not exist (only 0)");
    return nullptr;
  }
  try {
    return new fnn_device();
  } catch (const dnnl::error &E) {
    setLastError(std::string("fnn_device_create: oneDNN: ") + E.what());
  } catch (const std::exception &E) {
    setLastError(std::string("fnn_device_create: ") + E.what());
  }
  return nullptr;
}

extern "C" void fnn_device_destroy(fnn_device *Device) { delete Device; }

extern "C" void *fnn_device_alloc(fnn_device *Device, size_t Bytes) {
  (void)Device;
  clearLastError();
  try {
    // A zero-byte request still gets a distinct pointer, as malloc's may.
    return allocateAligned(Bytes ? Bytes : 1).release();
  } catch (const std::bad_alloc &) {
    setLastError("fnn_device_alloc: out of memory allocating " +
                 std::to_string(Bytes) + " bytes");
    return nullptr;
  }
}

extern "C" void fnn_device_free(fnn_device *Device, void *Memory) {
  (void)Device;
  std::free(Memory);
}

extern "C" void fnn_copy_to_device(fnn_device *Device, void *Dst,
                                   const void *Src, size_t Bytes) {
  (void)Device;
  if (Bytes)
    std::memcpy(Dst, Src, Bytes);
}

extern "C" void fnn_copy_to_host(fnn_device *Device, void *Dst, const void *Src,
                                 size_t Bytes) {
  (void)Device;
  if (Bytes)
    std::memcpy(Dst, Src, Bytes);
}

extern "C" void fnn_device_synchronize(fnn_device *Device) {
  if (dnnl_stream_wait(Device->Stream.get()) != dnnl_success)
    setLastError("fnn_device_synchronize: oneDNN stream wait failed");
}
