//===- npy.h - numpy .npy file reading and writing --------------*- C++ -*-===//
//
// infer.bin reads its inputs and writes its outputs as .npy files. Supported:
// format versions 1.0, 2.0 and 3.0, C order, little-endian element types
// '<f4' '<f8' '<f2' '<i8' '<i4' '<i2' '|i1' '|u1' '<u2' '|b1'. Every failure is
// one line naming the file, the byte offset and what is wrong; a corrupt header
// never causes an allocation larger than the file.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_NPY_H
#define FASTNN_RUNTIME_NPY_H

#include "fastnn/data/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::runtime {

using fastnn::data::Status;

/// numpy has no bfloat16: bf16 tensors travel as their raw bits in U16.
enum class NpyType { F32, F64, F16, I64, I32, I16, I8, U8, U16, Bool };

/// Bytes per element.
size_t npyTypeSize(NpyType Type);
/// numpy's descr string, e.g. "<f4".
const char *npyTypeDescr(NpyType Type);

struct NpyArray {
  NpyType Type = NpyType::F32;
  /// Empty for a 0-d array (one element).
  std::vector<int64_t> Shape;
  /// The elements in C order, little endian.
  std::vector<unsigned char> Data;

  int64_t numElements() const;
};

/// Reads \p Path into \p Out.
Status readNpy(const std::string &Path, NpyArray &Out);
/// Parses a whole .npy file held in memory; \p Name only appears in errors.
Status parseNpy(const std::string &Name, const void *Data, size_t Size,
                NpyArray &Out);
/// Writes \p Data (numElements of \p Shape elements of \p Type, C order) as
/// a version 1.0 file, or 2.0 if the header needs it.
Status writeNpy(const std::string &Path, NpyType Type,
                const std::vector<int64_t> &Shape, const void *Data);
inline Status writeNpy(const std::string &Path, const NpyArray &Array) {
  return writeNpy(Path, Array.Type, Array.Shape, Array.Data.data());
}

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_NPY_H
