//===- AtomicFile.h - Files that appear whole or not at all -----*- C++ -*-===//

#ifndef FASTNN_TRAINER_ATOMICFILE_H
#define FASTNN_TRAINER_ATOMICFILE_H

#include "fastnn/data/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fastnn::trainer {

using data::Status;

/// The suffix of the temporary file writeFileAtomically writes first.
inline constexpr const char *AtomicTempSuffix = ".tmp";

/// Writes the concatenated Pieces to Path + AtomicTempSuffix, fsyncs it,
/// renames it to Path and fsyncs the directory: after a crash at any point
/// Path holds either its old content or the whole new one. CrashAfterBytes
/// (a test hook; SIZE_MAX: never) makes the process kill itself with
/// SIGKILL once that many bytes are written and synced. A failing call
/// (create, write, fsync, close, rename: a full disk, an I/O error) leaves
/// Path as it was, removes the temporary file and returns an ioError naming
/// Path, the call and the system's reason; a failing fsync of the
/// directory comes after the rename, and its error says so.
Status
writeFileAtomically(const std::string &Path,
                    const std::vector<std::pair<const void *, size_t>> &Pieces,
                    size_t CrashAfterBytes = SIZE_MAX);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_ATOMICFILE_H
