//===- Checkpoint.cpp - Saving and restoring the training state -----------===//

#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/AtomicFile.h"

#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace fastnn::trainer {

namespace fs = std::filesystem;
using runtime::shapeText;

namespace {

constexpr const char *Prefix = "model.ckpt-";
constexpr const char *IndexName = "checkpoint";

const char *roleName(int64_t Role) {
  switch (Role) {
  case FNN_STATE_TRAINABLE:
    return "trainable";
  case FNN_STATE_STATISTIC:
    return "statistic";
  case FNN_STATE_SLOT:
    return "slot";
  default:
    return "unknown";
  }
}

/// The step of a "model.ckpt-STEP" name, or -1.
int64_t stepOfName(const std::string &Name) {
  std::string P = Prefix;
  if (Name.size() <= P.size() || Name.compare(0, P.size(), P) != 0)
    return -1;
  int64_t Step = 0;
  for (size_t I = P.size(); I < Name.size(); ++I) {
    if (Name[I] < '0' || Name[I] > '9' || Step > (INT64_MAX - 9) / 10)
      return -1;
    Step = Step * 10 + (Name[I] - '0');
  }
  return Step;
}

/// The quoted value of a `key: "value"` line of the index, or "".
std::string quotedValue(const std::string &Line, const std::string &Key) {
  if (Line.compare(0, Key.size() + 1, Key + ":") != 0)
    return "";
  size_t Open = Line.find('"', Key.size() + 1);
  size_t Close = Line.rfind('"');
  if (Open == std::string::npos || Close <= Open)
    return "";
  return Line.substr(Open + 1, Close - Open - 1);
}

std::string inDirectory(const std::string &Dir, const std::string &Name) {
  return !Name.empty() && Name.front() == '/' ? Name : Dir + "/" + Name;
}

/// The index's entries: the latest and every kept one (oldest first, as
/// TensorFlow writes them). Exists is false without an index.
Status readIndex(const std::string &Dir, std::string &Latest,
                 std::vector<std::string> &All, bool &Exists) {
  Latest.clear();
  All.clear();
  std::string Path = Dir + "/" + IndexName;
  std::error_code Ec;
  Exists = fs::exists(Path, Ec);
  if (!Exists)
    return Status::success();
  std::ifstream In(Path);
  if (!In)
    return Status::error(Path + ": cannot read the checkpoint index");
  std::string Line;
  for (int LineNo = 1; std::getline(In, Line); ++LineNo) {
    if (Line.empty())
      continue;
    std::string Value = quotedValue(Line, "model_checkpoint_path");
    if (!Value.empty()) {
      Latest = inDirectory(Dir, Value);
      continue;
    }
    Value = quotedValue(Line, "all_model_checkpoint_paths");
    if (Value.empty())
      return Status::error(Path + ":" + std::to_string(LineNo) +
                           ": not a checkpoint index line (expects "
                           "model_checkpoint_path: \"...\" or "
                           "all_model_checkpoint_paths: \"...\"); delete "
                           "the file to have it rebuilt from the "
                           "directory");
    All.push_back(inDirectory(Dir, Value));
  }
  if (!Latest.empty() && std::find(All.begin(), All.end(), Latest) == All.end())
    All.push_back(Latest);
  return Status::success();
}

Status writeIndex(const std::string &Dir, const std::string &Latest,
                  const std::vector<std::string> &All) {
  auto relative = [&](const std::string &Path) {
    std::string Base = Dir + "/";
    return Path.compare(0, Base.size(), Base) == 0 ? Path.substr(Base.size())
                                                   : Path;
  };
  std::string Text = "model_checkpoint_path: \"" + relative(Latest) + "\"\n";
  for (const std::string &Path : All)
    Text += "all_model_checkpoint_paths: \"" + relative(Path) + "\"\n";
  return writeFileAtomically(Dir + "/" + IndexName,
                             {{Text.data(), Text.size()}});
}

/// The model.ckpt-STEP files of Dir by step.
Status scanDirectory(const std::string &Dir, std::vector<std::string> &Paths) {
  Paths.clear();
  std::error_code Ec;
  fs::directory_iterator It(Dir, Ec), End;
  if (Ec)
    return Status::error(Dir + ": " + Ec.message());
  std::vector<std::pair<int64_t, std::string>> Found;
  for (; It != End; It.increment(Ec)) {
    if (Ec)
      return Status::error(Dir + ": " + Ec.message());
    int64_t Step = stepOfName(It->path().filename().string());
    if (Step >= 0)
      Found.emplace_back(Step, Dir + "/" + It->path().filename().string());
  }
  std::sort(Found.begin(), Found.end());
  for (auto &[Step, Path] : Found)
    Paths.push_back(Path);
  return Status::success();
}

} // namespace

std::vector<StateTensor>
arenaTensors(const std::vector<runtime::TensorRecord> &State,
             const runtime::ArenaAccess &Arena,
             std::vector<runtime::HostRegion> &Regions) {
  Regions.clear();
  Regions.reserve(State.size());
  std::vector<StateTensor> Tensors;
  for (const runtime::TensorRecord &Record : State) {
    runtime::HostRegion &Region = Regions.emplace_back(Arena, Record);
    Region.load();
    StateTensor T;
    T.Name = Record.name;
    T.Role = Record.kind;
    T.Dtype = Record.dtype;
    T.Shape = Record.shape;
    T.Data = Region.data();
    T.Bytes = Region.size();
    Tensors.push_back(std::move(T));
  }
  return Tensors;
}

std::string checkpointFileName(int64_t Step) {
  return Prefix + std::to_string(Step);
}

Status listCheckpoints(const std::string &Dir,
                       std::vector<std::string> &Paths) {
  std::string Latest;
  bool Exists = false;
  if (Status S = readIndex(Dir, Latest, Paths, Exists); !S.ok() || Exists)
    return S;
  return scanDirectory(Dir, Paths);
}

Status saveCheckpoint(const std::string &Dir, const Checkpoint &C,
                      int64_t KeepMax, std::string &Path,
                      std::vector<std::string> &Removed) {
  Removed.clear();
  std::vector<std::string> Kept;
  if (Status S = listCheckpoints(Dir, Kept); !S.ok())
    return S;
  Path = Dir + "/" + checkpointFileName(C.Step);
  if (Status S = writeCheckpoint(Path, C); !S.ok())
    return S;
  const bool Listed = std::find(Kept.begin(), Kept.end(), Path) != Kept.end();
  Kept.erase(std::remove(Kept.begin(), Kept.end(), Path), Kept.end());
  Kept.push_back(Path);
  std::vector<std::string> Old;
  if (KeepMax > 0 && Kept.size() > static_cast<size_t>(KeepMax)) {
    Old.assign(Kept.begin(), Kept.end() - KeepMax);
    Kept.erase(Kept.begin(), Kept.end() - KeepMax);
  }
  // The index stops naming a checkpoint before it is deleted.
  if (Status S = writeIndex(Dir, Path, Kept); !S.ok()) {
    // Unindexed, the new file would only take the space a retry needs.
    std::error_code Ec;
    if (!Listed)
      fs::remove(Path, Ec);
    return S;
  }
  for (const std::string &File : Old) {
    std::error_code Ec;
    if (fs::remove(File, Ec))
      Removed.push_back(File);
  }
  return Status::success();
}

Status loadLatestCheckpoint(const std::string &Dir, Checkpoint &Out,
                            std::string &Path, bool &Found,
                            std::vector<std::string> &Warnings) {
  Found = false;
  Warnings.clear();
  std::error_code Ec;
  if (!fs::exists(Dir, Ec))
    return Status::success();
  std::string Latest;
  std::vector<std::string> Paths;
  bool Exists = false;
  if (Status S = readIndex(Dir, Latest, Paths, Exists); !S.ok())
    return S;
  if (!Exists) {
    if (Status S = scanDirectory(Dir, Paths); !S.ok())
      return S;
  } else if (!Latest.empty()) {
    // The latest first, then the others newest first.
    Paths.erase(std::remove(Paths.begin(), Paths.end(), Latest), Paths.end());
    Paths.push_back(Latest);
  }
  std::vector<std::string> Failures;
  for (auto It = Paths.rbegin(); It != Paths.rend(); ++It) {
    Status S = readCheckpoint(*It, Out);
    if (S.ok()) {
      Found = true;
      Path = *It;
      for (const std::string &Failure : Failures)
        Warnings.push_back(Failure + "; using the older " + Path);
      return Status::success();
    }
    Failures.push_back(S.message());
  }
  if (Failures.empty())
    return Status::success();
  std::string Message;
  for (const std::string &Failure : Failures)
    Message += (Message.empty() ? "" : "\n") + Failure;
  return Status::error(Message + "\n" + Dir +
                       ": no readable checkpoint to resume; move the "
                       "directory away to start afresh");
}

Status removeIncompleteWrites(const std::string &Dir,
                              std::vector<std::string> &Removed) {
  Removed.clear();
  std::error_code Ec;
  fs::directory_iterator It(Dir, Ec), End;
  if (Ec)
    return Status::error(Dir + ": " + Ec.message());
  std::vector<std::string> Temps;
  for (; It != End; It.increment(Ec)) {
    if (Ec)
      return Status::error(Dir + ": " + Ec.message());
    std::string Name = It->path().filename().string();
    std::string Suffix = AtomicTempSuffix;
    if (Name.size() <= Suffix.size() ||
        Name.compare(Name.size() - Suffix.size(), Suffix.size(), Suffix) != 0)
      continue;
    std::string Base = Name.substr(0, Name.size() - Suffix.size());
    if (Base == IndexName || stepOfName(Base) >= 0)
      Temps.push_back(Dir + "/" + Name);
  }
  for (const std::string &Temp : Temps)
    if (fs::remove(Temp, Ec))
      Removed.push_back(Temp);
  return Status::success();
}

Status restoreTensors(const std::vector<StateTensor> &From,
                      const std::string &FromName,
                      const std::vector<runtime::TensorRecord> &To,
                      const runtime::ArenaAccess &Arena, RestoreMode Mode,
                      RestoreReport &Report) {
  Report = RestoreReport();
  std::map<std::string, const StateTensor *> ByName;
  for (const StateTensor &T : From)
    ByName[T.Name] = &T;
  const std::string Remedy =
      Mode == RestoreMode::Resume
          ? "; resuming needs the same model (recompile it with the same "
            "hyperparameters, or use another train_dir)"
          : "; the checkpoint must come from a training run of this model";
  auto describe = [](int64_t Role, int64_t Dtype,
                     const std::vector<int64_t> &Shape) {
    return std::string(roleName(Role)) + " dtype " + std::to_string(Dtype) +
           " " + shapeText(Shape);
  };
  // Initialize reports the first offender and how many there are.
  std::string FirstOffence;
  int64_t Offences = 0;
  for (const runtime::TensorRecord &Record : To) {
    if ((Mode == RestoreMode::Finetune || Mode == RestoreMode::Initialize) &&
        Record.kind == FNN_STATE_SLOT)
      continue;
    auto It = ByName.find(Record.name);
    if (It == ByName.end()) {
      if (Mode == RestoreMode::Finetune) {
        Report.Missing.push_back(Record.name);
        continue;
      }
      if (Mode == RestoreMode::Initialize) {
        if (Offences++ == 0)
          FirstOffence = "has no tensor '" + Record.name + "' (" +
                         describe(Record.kind, Record.dtype, Record.shape) +
                         ")";
        continue;
      }
      return Status::error(
          FromName + ": has no tensor '" + Record.name + "' (" +
          describe(Record.kind, Record.dtype, Record.shape) + ")" + Remedy);
    }
    const StateTensor &T = *It->second;
    bool Same = T.Dtype == Record.dtype && T.Shape == Record.shape &&
                (Mode != RestoreMode::Resume || T.Role == Record.kind);
    if (!Same && Mode == RestoreMode::Initialize) {
      // The file's tensors have no role (ONNX) or the model's.
      if (Offences++ == 0)
        FirstOffence = "tensor '" + Record.name + "' is dtype " +
                       std::to_string(T.Dtype) + " " + shapeText(T.Shape) +
                       ", the model's " +
                       describe(Record.kind, Record.dtype, Record.shape);
      continue;
    }
    if (!Same) {
      std::string What = "'" + Record.name + "': checkpoint " +
                         describe(T.Role, T.Dtype, T.Shape) + " vs model " +
                         describe(Record.kind, Record.dtype, Record.shape);
      if (Mode != RestoreMode::Finetune)
        return Status::error(FromName + ": tensor " + What + Remedy);
      Report.Skipped.push_back(What);
      continue;
    }
    Arena.write(Record.offset, T.Data, T.Bytes);
    ++Report.Restored;
  }
  if (Offences > 0)
    return Status::error(
        FromName + ": " + FirstOffence +
        (Offences > 1 ? " (" + std::to_string(Offences) +
                            " of the model's parameters and statistics are "
                            "missing or of another dtype or shape)"
                      : ""));
  if (Mode == RestoreMode::Initialize)
    for (const StateTensor &T : From) {
      const runtime::TensorRecord *Record = nullptr;
      for (int64_t Role : {FNN_STATE_TRAINABLE, FNN_STATE_STATISTIC})
        if (!Record)
          Record = runtime::findTensorRecord(To, Role, T.Name);
      if (!Record)
        Report.Unused.push_back(T.Name);
    }
  if (Mode == RestoreMode::Resume && From.size() != To.size())
    for (const StateTensor &T : From)
      if (!runtime::findTensorRecord(To, T.Role, T.Name))
        return Status::error(FromName + ": holds tensor '" + T.Name +
                             "', which the model does not have" + Remedy);
  if (Mode == RestoreMode::Finetune && Report.Restored == 0)
    return Status::error(FromName + ": no tensor matches the model's "
                                    "parameters by name and shape; is it a "
                                    "checkpoint of this model?");
  return Status::success();
}

} // namespace fastnn::trainer
