//===- ModelDevice.cpp - a compiled model's device and arena --------------===//

#include "fastnn/runtime/ModelDevice.h"

namespace fastnn::runtime {

std::string deviceKindName(int64_t Kind) {
  switch (Kind) {
  case FNN_DEVICE_CPU:
    return "CPU";
  case FNN_DEVICE_CUDA:
    return "GPU";
  default:
    return "kind " + std::to_string(Kind);
  }
}

int64_t modelDeviceIndex(int64_t Kind, int64_t LocalWorker) {
  return Kind == FNN_DEVICE_CPU ? 0 : LocalWorker;
}

fnn_device *createModelDevice(int64_t LocalWorker, std::string &Error) {
  const int64_t Kind = fnn_device_default_kind();
  const int64_t Index = modelDeviceIndex(Kind, LocalWorker);
  fnn_device *Device = fnn_device_create(Kind, Index);
  if (!Device)
    Error = "cannot create the " + deviceKindName(Kind) + " device " +
            std::to_string(Index) + ": " + fnn_last_error();
  return Device;
}

void ArenaAccess::read(int64_t Offset, void *Host, size_t Bytes) const {
  fnn_copy_to_host(Device, Host, Arena + Offset, Bytes);
}

void ArenaAccess::write(int64_t Offset, const void *Host, size_t Bytes) const {
  fnn_copy_to_device(Device, Arena + Offset, Host, Bytes);
}

HostRegion::HostRegion(const ArenaAccess &Access, int64_t Offset, size_t Bytes)
    : Access(Access), Offset(Offset), Bytes(Bytes) {
  if (Access.hostAddressable()) {
    Data = Access.arena() + Offset;
  } else {
    Mirror.resize(Bytes);
    Data = Mirror.data();
  }
}

void HostRegion::load() {
  if (!Access.hostAddressable())
    Access.read(Offset, Data, Bytes);
}

void HostRegion::store() const {
  if (!Access.hostAddressable())
    Access.write(Offset, Data, Bytes);
}

} // namespace fastnn::runtime
