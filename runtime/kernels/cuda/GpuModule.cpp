//===- GpuModule.cpp - generated loop nests as device kernels -------------===//
//
// fnn_gpu_module_load / fnn_gpu_function_create / fnn_gpu_launch over the
// CUDA runtime's library API (cudaLibraryLoadData, cudaLibraryGetKernel,
// cudaLaunchKernel with the cudaKernel_t as the function): no direct link
// to libcuda, which only a machine with a driver has. A function keeps its
// library alive, so modules and functions may be destroyed in any order.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"

using namespace fastnn::cuda;
using fastnn::runtime::clearLastError;
using fastnn::runtime::setLastError;

namespace {

struct LoadedLibrary {
  cudaLibrary_t Library = nullptr;
  /// The image, kept for the library's lifetime: with lazy module loading
  /// (CUDA's default) code is loaded when a kernel is first used.
  std::vector<char> Image;
  ~LoadedLibrary() {
    if (Library)
      cudaLibraryUnload(Library);
  }
};

struct GpuModule final : CudaKernel {
  using CudaKernel::CudaKernel;
  std::shared_ptr<LoadedLibrary> Library;
};

struct GpuFunction final : CudaKernel {
  using CudaKernel::CudaKernel;
  std::shared_ptr<LoadedLibrary> Library;
  cudaKernel_t Kernel = nullptr;
  std::string Name;
  /// What a failed launch reports, made at create: a launch allocates
  /// nothing.
  std::string LaunchWhat;
};

} // namespace

extern "C" fnn_kernel *fnn_gpu_module_load(fnn_device *Device,
                                           const void *Image, int64_t Bytes) {
  clearLastError();
  if (!Device || !Image || Bytes <= 0) {
    setLastError("fnn_gpu_module_load: device or image is null or empty");
    return nullptr;
  }
  try {
    auto Module = std::make_unique<GpuModule>(*Device);
    Module->Library = std::make_shared<LoadedLibrary>();
    const char *Begin = static_cast<const char *>(Image);
    Module->Library->Image.assign(Begin, Begin + Bytes);
    check(cudaSetDevice(Device->Index), "cudaSetDevice");
    check(cudaLibraryLoadData(&Module->Library->Library,
                              Module->Library->Image.data(), nullptr, nullptr,
                              0, nullptr, nullptr, 0),
          "cudaLibraryLoadData");
    return Module.release();
  } catch (const std::exception &E) {
    setLastError(std::string("fnn_gpu_module_load: ") + E.what() + "; image " +
                 std::to_string(Bytes) + " bytes");
  }
  return nullptr;
}

extern "C" fnn_kernel *fnn_gpu_function_create(fnn_kernel *ModuleHandle,
                                               const char *Name) {
  clearLastError();
  auto *Module = dynamic_cast<GpuModule *>(ModuleHandle);
  if (!Module || !Name) {
    setLastError("fnn_gpu_function_create: not a module of "
                 "fnn_gpu_module_load, or no name");
    return nullptr;
  }
  try {
    auto Function = std::make_unique<GpuFunction>(Module->Device);
    Function->Library = Module->Library;
    Function->Name = Name;
    Function->LaunchWhat = std::string("cudaLaunchKernel ") + Name;
    check(
        cudaLibraryGetKernel(&Function->Kernel, Module->Library->Library, Name),
        "cudaLibraryGetKernel");
    return Function.release();
  } catch (const std::exception &E) {
    setLastError(std::string("fnn_gpu_function_create: ") + E.what() +
                 "; kernel " + Name);
  }
  return nullptr;
}

extern "C" void fnn_gpu_launch(fnn_kernel *Handle, int64_t Blocks,
                               int64_t Threads, void **Params) {
  auto &Function = static_cast<GpuFunction &>(*Handle);
  if (Blocks < 1 || Blocks > 0x7fffffff || Threads < 1 || Threads > 1024) {
    setLastError("fnn_gpu_launch: " + Function.Name + ": " +
                 std::to_string(Blocks) + " blocks of " +
                 std::to_string(Threads) + " threads is not a valid 1-D grid");
    return;
  }
  succeeded(cudaLaunchKernel(reinterpret_cast<const void *>(Function.Kernel),
                             dim3(static_cast<unsigned>(Blocks)),
                             dim3(static_cast<unsigned>(Threads)), Params, 0,
                             Function.Device.Compute),
            "fnn_gpu_launch", Function.LaunchWhat.c_str());
}
