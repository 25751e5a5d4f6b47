//===- KernelBase.h - what every backend's kernels share --------*- C++ -*-===//
//
// abi.h's fnn_kernel is opaque to generated code; inside the runtime it is
// this polymorphic base, which each backend's kernels and the collectives'
// allreduce kernels derive from, so that the one fnn_kernel_destroy frees
// any of them. Also here: the descriptor checks every backend makes and the
// exception-to-fnn_last_error boundary of the *_create functions.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_KERNELBASE_H
#define FASTNN_RUNTIME_KERNELBASE_H

#include "fastnn/runtime/LastError.h"
#include "fastnn/runtime/abi.h"

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

struct fnn_kernel {
  virtual ~fnn_kernel() = default;
  fnn_kernel(const fnn_kernel &) = delete;
  fnn_kernel &operator=(const fnn_kernel &) = delete;

protected:
  fnn_kernel() = default;
};

namespace fastnn::runtime {

/// A create-time problem found by the runtime's own checks (as opposed to
/// the kernel library's); caught at the ABI boundary.
class KernelError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// "3x3" (or Values[0], Sep, Values[1]): a descriptor's pairs in messages.
std::string formatPair(const int64_t *Values, const char *Sep = "x");
/// Throws a KernelError unless \p Shape has rank \p MinRank to \p MaxRank
/// and positive dimensions.
void checkShape(const fnn_shape &Shape, const char *Name, int64_t MinRank,
                int64_t MaxRank);
void checkF32(int64_t DType);
/// FNN_F32, FNN_BF16 or FNN_F16: the types of mixed-precision training.
void checkFloatType(int64_t DType);
void checkLayout(int64_t Layout);
/// A post-op word as convolutions take it: FNN_POST_NONE, FNN_POST_RELU or
/// FNN_POST_RELU6, optionally or'ed with FNN_POST_ACCUMULATE.
void checkPostOp(int64_t PostOp);
/// checkPostOp for kernels that fuse a relu at most (matmul, batch norm).
void checkReluPostOp(int64_t PostOp, const char *Kernel);
/// Throws unless \p PostOp is FNN_POST_NONE, FNN_POST_RELU or
/// FNN_POST_RELU6, optionally or'ed with FNN_POST_RESIDUAL: what a training
/// batch norm's forward takes.
void checkTrainingBatchNormPostOp(int64_t PostOp);
/// ", accumulate, relu6" and the like: a post-op in a kernel's description
/// ("" for FNN_POST_NONE).
std::string postOpText(int64_t PostOp);

/// Runs \p Make(*Desc) (which returns a std::unique_ptr to the new kernel)
/// at the ABI boundary: any exception becomes NULL plus a one-line
/// fnn_last_error naming the function, the problem and the op
/// (\p Describe(*Desc) is called only on failure).
template <typename DeviceT, typename DescT, typename MakeFn,
          typename DescribeFn>
fnn_kernel *createKernel(const char *Function, const DeviceT *Device,
                         const DescT *Desc, MakeFn Make, DescribeFn Describe) {
  clearLastError();
  if (!Device || !Desc) {
    setLastError(std::string(Function) + ": device or descriptor is null");
    return nullptr;
  }
  std::string Reason;
  try {
    return Make(*Desc).release();
  } catch (const std::bad_alloc &) {
    Reason = "out of memory";
  } catch (const std::exception &E) {
    Reason = E.what();
  }
  try {
    setLastError(std::string(Function) + ": " + Reason + "; " +
                 Describe(*Desc));
  } catch (const std::exception &) {
    setLastError(Function);
  }
  return nullptr;
}

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_KERNELBASE_H
