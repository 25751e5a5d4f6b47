//===- HostAccess.cpp - what drivers ask the CPU device -------------------===//
//
// The CPU runtime drives the CPU device, whose memory is the host's: drivers
// fill and read the arena in place instead of staging copies.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/abi.h"

extern "C" int64_t fnn_device_default_kind(void) { return FNN_DEVICE_CPU; }

extern "C" int64_t fnn_device_host_addressable(fnn_device *Device) {
  (void)Device;
  return 1;
}
