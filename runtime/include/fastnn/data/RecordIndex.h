//===- RecordIndex.h - Per-file record offsets, cached beside the data -*- C++
//-*-===//
//
// The byte offset of every record of an uncompressed TFRecord file, so that
// workers can read any record directly: record-level sharding, a global
// shuffle, an exact resume position. Kept beside the data as FILE.fnnidx:
//
//   "FNNRIDX\0" | u32 version | u32 0 | u64 file size | i64 mtime (ns)
//   | u64 max record bytes | u64 records | u64 damaged
//   | u64 offsets[records] | u64 damaged offsets[damaged] | u32 crc32c
//
// (little endian; the CRC covers everything before it). An index is trusted
// only when its file's size and modification time are the recorded ones;
// anything else is rebuilt from the data.
//
// The damaged records the reader would drop (a bad data CRC, or where the
// framing is lost, after which the file is not indexed further) are listed
// by offset, so that the damaged-record policy meets each once, as it does
// reading the file in order.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_RECORDINDEX_H
#define FASTNN_DATA_RECORDINDEX_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::data {

struct RecordIndex {
  uint64_t FileSize = 0;
  int64_t MtimeNs = 0;
  uint64_t MaxRecordBytes = 0;
  /// Readable records, in file order.
  std::vector<uint64_t> Offsets;
  /// Damaged records, in file order.
  std::vector<uint64_t> Damaged;

  /// Bytes from record \p I to the next record or damage (or the end):
  /// its framed size when the file is intact there.
  uint64_t span(size_t I) const;
};

/// Where the index of \p DataPath is kept.
std::string recordIndexPath(const std::string &DataPath);
/// Whether \p Name is an index file (or one being written), which no
/// dataset listing should take.
bool isRecordIndexFile(const std::string &Name);

/// Scans uncompressed \p Path. Damage is recorded, not an error; only a
/// file that cannot be read is.
Status buildRecordIndex(const std::string &Path, uint64_t MaxRecordBytes,
                        RecordIndex &Out);

enum class IndexState { Fresh, Missing, Stale, Damaged };

/// Reads the index of \p DataPath from \p IndexPath and checks it against
/// the file; \p Why says what is wrong unless Fresh.
IndexState readRecordIndex(const std::string &DataPath,
                           const std::string &IndexPath,
                           uint64_t MaxRecordBytes, RecordIndex &Out,
                           std::string &Why);
/// Writes atomically (a temporary file renamed over the old index).
Status writeRecordIndex(const std::string &IndexPath, const RecordIndex &Index);

/// The index of \p DataPath: the saved one if fresh, else rebuilt and saved
/// beside it. \p Notice gets one line when a saved index was stale or
/// damaged, or the new one cannot be saved (a read-only dataset directory:
/// it is kept in memory for this run); \p Built says it was scanned.
Status loadRecordIndex(const std::string &DataPath, uint64_t MaxRecordBytes,
                       RecordIndex &Out, std::string &Notice, bool &Built);

} // namespace fastnn::data

#endif // FASTNN_DATA_RECORDINDEX_H
