//===- Hparams.h - The trainer's typed hyperparameters ----------*- C++ -*-===//
//
// Every key of a FastNN hyperparameter file (shared/HPARAMS.md, the PAI FastNN
// flags) in one table: type, default, valid values, help, and whether fastnnc
// bakes it into the compiled step. Values come from a file of key=value lines
// and from --key=value flags (flags win); each error is one line that names
// the file and line (or the flag) and the key. The same table serves fastnnc,
// which writes the compile-time keys into fnn_model_config, and train.bin,
// which refuses a run-time value that contradicts them.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_HPARAMS_H
#define FASTNN_TRAINER_HPARAMS_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::trainer {

using data::Status;

enum class HparamType { String, Int, Float, Bool };

/// One row of the key table.
struct HparamSpec {
  const char *Name;
  const char *Section;
  HparamType Type;
  /// The default as it would be written in a file; nullptr: unset (the
  /// flag's default is Python's None).
  const char *Default;
  /// Bounds of Int and Float keys; an open bound excludes its value.
  double Min, Max;
  bool MinOpen, MaxOpen;
  /// Enum keys: the valid values separated by ','. A List key takes a
  /// comma-separated subset of them.
  const char *Choices;
  bool List;
  /// fastnnc bakes the value into the compiled step.
  bool CompileTime;
  const char *Help;
};

/// The table, in the order of HPARAMS.md's sections.
const std::vector<HparamSpec> &hparamSpecs();
/// nullptr when Name is not a key.
const HparamSpec *findHparam(const std::string &Name);
/// The key closest to Name by edit distance, or "" when none is close enough
/// to be a likely typo.
std::string closestHparam(const std::string &Name);
/// What `--help` shows: every key by section with type, default, valid
/// values and a [compile-time] mark.
std::string hparamsHelp();

/// The effective configuration: defaults overridden by a file, flags and the
/// compiled configuration.
class Hparams {
public:
  Hparams();

  /// Reads key=value lines (blank lines and lines starting with '#' are
  /// skipped). Origin names the text in messages ("run.txt"). Every bad line
  /// is reported, one line each; a key given twice is an error.
  Status parseText(const std::string &Text, const std::string &Origin);
  Status parseFile(const std::string &Path);
  /// Applies --key=value flags (a bare --key sets a bool key to True) in
  /// order; a flag repeated is an error, a flag overrides the file.
  Status parseFlags(const std::vector<std::string> &Flags);
  /// Checks that hold between keys (steps multiple of iterations_per_loop,
  /// decay_scheme only with exponential decay).
  Status validate() const;

  /// Checks against the compiled step's configuration (fnn_model_config's
  /// key=value lines): a compile-time key given here with another value is
  /// an error naming where it was given and the compiled value; keys not
  /// given take the compiled value.
  Status applyCompiled(const std::string &CompiledConfig);

  bool isSet(const std::string &Key) const;
  /// True when a file or flag gave the key (not a default).
  bool isGiven(const std::string &Key) const;
  /// "run.txt:3", "--batch_size", "compiled configuration" or "default".
  const std::string &origin(const std::string &Key) const;
  /// The canonical text ("None" when unset).
  std::string text(const std::string &Key) const;
  const std::string &getString(const std::string &Key) const;
  int64_t getInt(const std::string &Key) const;
  double getFloat(const std::string &Key) const;
  bool getBool(const std::string &Key) const;

  /// Every key as key=value lines by section, parseable by parseText;
  /// keys not at their default are preceded by a comment naming where they
  /// were set.
  std::string configText() const;
  /// The compile-time keys as key=value lines: what fastnnc writes into
  /// fnn_model_config.
  std::string compiledConfigText() const;

  /// The typed value of one key.
  struct Value {
    bool Set = false;
    std::string Text;
    int64_t Int = 0;
    double Float = 0;
    bool Bool = false;
    std::string Origin = "default";
    bool Given = false;
  };

private:
  Status setValue(const std::string &Key, const std::string &RawValue,
                  const std::string &Where);
  size_t indexOf(const std::string &Key) const;

  std::vector<Value> Values;
};

/// Parses RawValue as Spec's type and checks its range and choices; Where
/// prefixes the message ("run.txt:3").
Status parseHparamValue(const HparamSpec &Spec, const std::string &RawValue,
                        const std::string &Where, Hparams::Value &Out);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_HPARAMS_H
