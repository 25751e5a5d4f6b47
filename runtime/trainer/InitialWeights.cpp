//===- InitialWeights.cpp - Weights that start a run ----------------------===//

#include "fastnn/trainer/InitialWeights.h"

#include <cerrno>
#include <filesystem>

namespace fastnn::trainer {

namespace fs = std::filesystem;

std::string weightsFilePath(const std::string &Configured) {
  if (!Configured.empty())
    return Configured;
  std::error_code Ec;
  fs::path Self = fs::read_symlink("/proc/self/exe", Ec);
  // glibc's name of the program as started, where /proc is not mounted.
  return (Ec ? std::string(program_invocation_name) : Self.string()) +
         WeightsFileSuffix;
}

Status loadWeightsFile(const std::string &Path,
                       const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena,
                       const std::string &HowToName) {
  const std::string What =
      "; the initial weights are the file fastnnc --weights=external "
      "wrote beside the executable: copy that file next to it (same name "
      "plus " +
      std::string(WeightsFileSuffix) + "), or name it with " + HowToName;
  std::error_code Ec;
  if (!fs::exists(Path, Ec))
    return Status::error(Path + ": no such weights file" + What);
  Checkpoint Weights;
  if (Status S = readCheckpoint(Path, Weights); !S.ok())
    return Status::error(S.message() + What);
  RestoreReport Report;
  if (Status S = restoreTensors(Weights.Tensors, Path, State, Arena,
                                RestoreMode::Initialize, Report);
      !S.ok())
    return Status::error(S.message() +
                         "; the weights file is another "
                         "model's" +
                         What);
  if (!Report.Unused.empty())
    return Status::error(Path + ": holds tensor '" + Report.Unused.front() +
                         "', which the model does not have; the weights "
                         "file is another model's" +
                         What);
  return Status::success();
}

} // namespace fastnn::trainer
