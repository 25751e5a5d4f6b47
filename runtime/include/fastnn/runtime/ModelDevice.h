//===- ModelDevice.h - a compiled model's device and arena ------*- C++ -*-===//
//
// What every driver of a compiled model (infer.bin, train.bin, test step
// runners) does with the device: make it, in one place, for the target whose
// runtime the executable was linked with, and reach the model's arena only
// through the ABI's device functions. On a device the host can address (the
// CPU) a HostRegion is the arena itself and nothing is copied; elsewhere
// (CUDA) it is a host buffer moved with fnn_copy_to_device/fnn_copy_to_host.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_MODELDEVICE_H
#define FASTNN_RUNTIME_MODELDEVICE_H

#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::runtime {

/// TensorFlow's name of a device type: "CPU", "GPU" (FNN_DEVICE_CUDA), or
/// "kind N" for an unknown fnn_device_kind.
std::string deviceKindName(int64_t Kind);

/// The device of Kind that the worker LocalWorker of a host (its
/// fnn_comm_local_rank) uses: its own where the kind has one per worker
/// (CUDA), else the host's one device, which its workers share (the CPU).
int64_t modelDeviceIndex(int64_t Kind, int64_t LocalWorker);

/// Creates that device for the executable's target, the kind its runtime
/// library drives (fnn_device_default_kind). Null on failure, with Error set
/// to one line naming the device and the reason.
fnn_device *createModelDevice(int64_t LocalWorker, std::string &Error);

/// Host code's access to one arena of Device. Reads see the device's work
/// only once it has finished (fnn_device_synchronize).
class ArenaAccess {
public:
  ArenaAccess(fnn_device *Device, unsigned char *Arena)
      : ArenaAccess(Device, Arena, fnn_device_host_addressable(Device) != 0) {}
  /// With HostAddressable false, host regions are staged even where the
  /// device could do without (how the tests run the staging path on the
  /// CPU).
  ArenaAccess(fnn_device *Device, unsigned char *Arena, bool HostAddressable)
      : Device(Device), Arena(Arena), HostAddressable(HostAddressable) {}

  fnn_device *device() const { return Device; }
  /// The arena's device address, for fnn_model_run and fnn_eval_run.
  unsigned char *arena() const { return Arena; }
  /// Whether host code may use the arena's memory in place.
  bool hostAddressable() const { return HostAddressable; }

  void read(int64_t Offset, void *Host, size_t Bytes) const;
  void write(int64_t Offset, const void *Host, size_t Bytes) const;

  template <typename T> T read(int64_t Offset) const {
    T Value;
    read(Offset, &Value, sizeof(T));
    return Value;
  }
  template <typename T> void write(int64_t Offset, const T &Value) const {
    write(Offset, &Value, sizeof(T));
  }

private:
  fnn_device *Device;
  unsigned char *Arena;
  bool HostAddressable;
};

/// Bytes of an arena at an offset as host memory: the arena's own memory
/// where the host can address it, else a host mirror that load() fills from
/// the device and store() copies back.
class HostRegion {
public:
  HostRegion(const ArenaAccess &Access, int64_t Offset, size_t Bytes);
  /// The whole tensor of Record.
  HostRegion(const ArenaAccess &Access, const TensorRecord &Record)
      : HostRegion(Access, Record.offset, static_cast<size_t>(Record.bytes())) {
  }
  HostRegion(HostRegion &&) = default;
  HostRegion &operator=(HostRegion &&) = default;
  HostRegion(const HostRegion &) = delete;
  HostRegion &operator=(const HostRegion &) = delete;

  unsigned char *data() { return Data; }
  const unsigned char *data() const { return Data; }
  size_t size() const { return Bytes; }

  /// Makes data() hold the device's bytes (nothing to do in place).
  void load();
  /// Makes the device hold data()'s bytes (nothing to do in place).
  void store() const;

private:
  ArenaAccess Access;
  int64_t Offset;
  size_t Bytes;
  std::vector<unsigned char> Mirror;
  unsigned char *Data;
};

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_MODELDEVICE_H
