//===- Checkpoint.h - Saving and restoring the training state ---*- C++ -*-===//
//
// A checkpoint is one file holding everything a run needs to continue
// bitwise where it stopped: the step, the input position (batches
// consumed; each sample's randomness derives from (seed, position), the
// compiled dropout's from (seed, step)), the seed, and every state tensor
// of the model (trainable parameters, batch-norm statistics, optimizer
// slots). Format, little endian:
//
//   header  "FNNCKPT\0" | u32 version (1) | u32 tensors | i64 step
//           | i64 data position | u64 seed | u64 payload bytes
//   payload per tensor: u32 name bytes | name | i32 role | i32 dtype
//           | u32 rank | i64 dims[rank] | u64 data bytes | data
//   footer  u32 CRC-32C of header and payload
//
// A directory of checkpoints works like TensorFlow's: files model.ckpt-STEP
// and a text index "checkpoint" naming the latest and the kept ones in
// TensorFlow's syntax. Every file is written to a temporary name, fsynced,
// renamed into place and the directory fsynced, so a crash at any moment
// leaves the previous checkpoint and index intact.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_CHECKPOINT_H
#define FASTNN_TRAINER_CHECKPOINT_H

#include "fastnn/data/Status.h"
#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::trainer {

using data::Status;

/// One state tensor; Data points into host memory: an arena the host can
/// address, a host copy of one (arenaTensors), or a Checkpoint's buffer.
struct StateTensor {
  std::string Name;
  int64_t Role = 0;  ///< fnn_state_role
  int64_t Dtype = 0; ///< fnn_dtype
  std::vector<int64_t> Shape;
  const unsigned char *Data = nullptr;
  uint64_t Bytes = 0;
};

struct Checkpoint {
  static constexpr uint32_t Version = 1;

  int64_t Step = 0;
  /// Batches the run had consumed.
  int64_t DataPosition = 0;
  uint64_t Seed = 0;
  std::vector<StateTensor> Tensors;
  /// The file's bytes when read; Tensors point into it.
  std::vector<unsigned char> Buffer;

  Checkpoint() = default;
  Checkpoint(Checkpoint &&) = default;
  Checkpoint &operator=(Checkpoint &&) = default;
  Checkpoint(const Checkpoint &) = delete;
  Checkpoint &operator=(const Checkpoint &) = delete;
};

/// The state records of a model as tensors in host memory: the arena itself
/// where the host can address it (no copy), else copies in Regions, which
/// must outlive the tensors.
std::vector<StateTensor>
arenaTensors(const std::vector<runtime::TensorRecord> &State,
             const runtime::ArenaAccess &Arena,
             std::vector<runtime::HostRegion> &Regions);

/// Writes C to Path through Path + ".tmp" (fsync, rename, fsync of the
/// directory). The environment variable FASTNN_TEST_KILL_IN_CHECKPOINT=STEP
/// makes the process kill itself with SIGKILL halfway through writing the
/// checkpoint of that step: the crash the atomic write must survive.
Status writeCheckpoint(const std::string &Path, const Checkpoint &C);
/// Reads and verifies a checkpoint; every error names Path.
Status readCheckpoint(const std::string &Path, Checkpoint &Out);

/// "model.ckpt-STEP".
std::string checkpointFileName(int64_t Step);

/// The checkpoints of Dir, oldest first: those its index lists, or, without
/// an index, the model.ckpt-STEP files in it.
Status listCheckpoints(const std::string &Dir, std::vector<std::string> &Paths);

/// Saves C as Dir/model.ckpt-STEP, makes it the index's latest and removes
/// the oldest so that KeepMax remain (0: keep all). Path is the new file,
/// Removed the files deleted. A write that fails (Status::ioError) leaves
/// the index and the checkpoints it names intact.
Status saveCheckpoint(const std::string &Dir, const Checkpoint &C,
                      int64_t KeepMax, std::string &Path,
                      std::vector<std::string> &Removed);

/// Reads the newest readable checkpoint of Dir. Found is false when Dir has
/// none. A newer checkpoint that cannot be read is passed over and
/// described in Warnings (one line each); when every one is unreadable the
/// error names them all.
Status loadLatestCheckpoint(const std::string &Dir, Checkpoint &Out,
                            std::string &Path, bool &Found,
                            std::vector<std::string> &Warnings);

/// Deletes temporary files that an interrupted write left in Dir.
Status removeIncompleteWrites(const std::string &Dir,
                              std::vector<std::string> &Removed);

/// How restoreTensors matches a checkpoint's tensors to a model's records.
enum class RestoreMode {
  /// Continue the same run: every record, slots included, must be there
  /// with its role, dtype and shape, and nothing else.
  Resume,
  /// Start from another model's weights: trainable parameters and
  /// statistics whose name, dtype and shape match are copied; the others
  /// (a classifier for another num_classes) keep their initial values.
  /// Optimizer slots start afresh.
  Finetune,
  /// Fill an evaluation model: each of its records must be there with its
  /// dtype and shape; the checkpoint may hold more (slots).
  Evaluate,
  /// Start from initial weights given by name (the weights file of
  /// fastnnc --weights=external, an ONNX model's initializers): every
  /// trainable parameter and statistic must be there with its dtype and
  /// shape (roles are not compared); slots keep their initial values;
  /// tensors the model lacks are listed in RestoreReport::Unused.
  Initialize,
};

struct RestoreReport {
  int64_t Restored = 0;
  /// "name: checkpoint [10, 84] vs model [5, 84]" for each record skipped
  /// (Finetune).
  std::vector<std::string> Skipped;
  /// Trainable and statistic records the checkpoint lacks (Finetune).
  std::vector<std::string> Missing;
  /// Tensors with no trainable or statistic record of that name
  /// (Initialize).
  std::vector<std::string> Unused;
};

/// Copies From (described in messages as FromName) into the records To of
/// Arena as Mode says.
Status restoreTensors(const std::vector<StateTensor> &From,
                      const std::string &FromName,
                      const std::vector<runtime::TensorRecord> &To,
                      const runtime::ArenaAccess &Arena, RestoreMode Mode,
                      RestoreReport &Report);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_CHECKPOINT_H
