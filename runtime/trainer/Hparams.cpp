//===- Hparams.cpp - Parsing and checking hyperparameter values -----------===//

#include "fastnn/trainer/Hparams.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace fastnn::trainer {
namespace {

std::string trim(const std::string &S) {
  size_t Begin = S.find_first_not_of(" \t\r");
  if (Begin == std::string::npos)
    return "";
  return S.substr(Begin, S.find_last_not_of(" \t\r") - Begin + 1);
}

/// The shortest text that reads back as exactly D, so that printed configs
/// and fnn_model_config compare equal to what was parsed.
std::string formatDouble(double D) {
  char Buffer[32];
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::snprintf(Buffer, sizeof(Buffer), "%.*g", Precision, D);
    if (std::strtod(Buffer, nullptr) == D)
      break;
  }
  std::string Text = Buffer;
  // Keep floats recognisable as floats ("1.0", not "1").
  if (Text.find_first_of(".eEn") == std::string::npos)
    Text += ".0";
  return Text;
}

std::string rangeText(const HparamSpec &Spec) {
  auto Bound = [&](double B) {
    return Spec.Type == HparamType::Int
               ? std::to_string(static_cast<int64_t>(B))
               : formatDouble(B);
  };
  bool HasMin = std::isfinite(Spec.Min), HasMax = std::isfinite(Spec.Max);
  if (HasMin && HasMax)
    return std::string(Spec.MinOpen ? "(" : "[") + Bound(Spec.Min) + ", " +
           Bound(Spec.Max) + (Spec.MaxOpen ? ")" : "]");
  if (HasMin)
    return std::string(Spec.MinOpen ? "> " : ">= ") + Bound(Spec.Min);
  return std::string(Spec.MaxOpen ? "< " : "<= ") + Bound(Spec.Max);
}

bool inRange(const HparamSpec &Spec, double V) {
  if (Spec.MinOpen ? V <= Spec.Min : V < Spec.Min)
    return false;
  return Spec.MaxOpen ? V < Spec.Max : V <= Spec.Max;
}

std::vector<std::string> splitList(const std::string &Text) {
  std::vector<std::string> Items;
  std::stringstream Stream(Text);
  std::string Item;
  while (std::getline(Stream, Item, ','))
    Items.push_back(trim(Item));
  if (!Text.empty() && Text.back() == ',')
    Items.push_back("");
  return Items;
}

bool isChoice(const HparamSpec &Spec, const std::string &Value) {
  for (const std::string &Choice : splitList(Spec.Choices))
    if (Choice == Value)
      return true;
  return false;
}

std::string joinLines(const std::vector<std::string> &Lines) {
  std::string Text;
  for (const std::string &Line : Lines)
    Text += (Text.empty() ? "" : "\n") + Line;
  return Text;
}

bool sameValue(const HparamSpec &Spec, const Hparams::Value &A,
               const Hparams::Value &B) {
  if (A.Set != B.Set)
    return false;
  if (!A.Set)
    return true;
  switch (Spec.Type) {
  case HparamType::Int:
    return A.Int == B.Int;
  case HparamType::Float:
    return A.Float == B.Float;
  case HparamType::Bool:
    return A.Bool == B.Bool;
  case HparamType::String:
    return A.Text == B.Text;
  }
  return false;
}

} // namespace

Status parseHparamValue(const HparamSpec &Spec, const std::string &RawValue,
                        const std::string &Where, Hparams::Value &Out) {
  std::string Value = trim(RawValue);
  std::string Prefix = Where + ": " + Spec.Name + ": ";
  Out = Hparams::Value();
  // TF flags whose default is None are unset again by None (what
  // --print-config writes for them). Lower-case none stays a value of string
  // keys: preprocessing_name=none asks for no preprocessing, while unset it
  // follows model_name.
  if (!Spec.Default && (Value == "None" || Value.empty() ||
                        (Value == "none" && Spec.Type != HparamType::String)))
    return Status::success();
  if (Value.empty())
    return Status::error(Prefix + "expects a value");
  Out.Set = true;
  switch (Spec.Type) {
  case HparamType::Bool:
    if (Value == "True" || Value == "true" || Value == "1")
      Out.Bool = true;
    else if (!(Value == "False" || Value == "false" || Value == "0"))
      return Status::error(Prefix +
                           "expects a bool (True, False, true, "
                           "false, 1 or 0), got '" +
                           Value + "'");
    Out.Text = Out.Bool ? "True" : "False";
    return Status::success();
  case HparamType::Int: {
    char *End = nullptr;
    errno = 0;
    long long V = std::strtoll(Value.c_str(), &End, 10);
    if (*End != '\0')
      return Status::error(Prefix + "expects an integer, got '" + Value + "'");
    if (errno == ERANGE || !inRange(Spec, static_cast<double>(V)))
      return Status::error(Prefix + Value + " is out of range (expects " +
                           rangeText(Spec) + ")");
    Out.Int = V;
    Out.Text = std::to_string(V);
    return Status::success();
  }
  case HparamType::Float: {
    char *End = nullptr;
    errno = 0;
    double V = std::strtod(Value.c_str(), &End);
    if (*End != '\0' || std::isnan(V))
      return Status::error(Prefix + "expects a number, got '" + Value + "'");
    if (errno == ERANGE || !std::isfinite(V) || !inRange(Spec, V))
      return Status::error(Prefix + Value + " is out of range (expects " +
                           rangeText(Spec) + ")");
    Out.Float = V;
    Out.Text = formatDouble(V);
    return Status::success();
  }
  case HparamType::String:
    if (Spec.Choices && !Spec.List && !isChoice(Spec, Value))
      return Status::error(Prefix + "'" + Value + "' is not one of " +
                           Spec.Choices);
    if (Spec.List)
      for (const std::string &Item : splitList(Value))
        if (!isChoice(Spec, Item))
          return Status::error(Prefix + "'" + Item + "' is not one of " +
                               Spec.Choices);
    Out.Text = Value;
    return Status::success();
  }
  return Status::success();
}

Hparams::Hparams() {
  for (const HparamSpec &Spec : hparamSpecs()) {
    Value V;
    if (Spec.Default) {
      // The table's defaults are valid by construction; a test parses them.
      (void)parseHparamValue(Spec, Spec.Default, "default", V);
    }
    Values.push_back(V);
  }
}

size_t Hparams::indexOf(const std::string &Key) const {
  const HparamSpec *Spec = findHparam(Key);
  // Callers name keys in code; a misspelt one is a programming error that
  // every test run would hit at once.
  if (!Spec) {
    std::fprintf(stderr, "fastnn: internal error: no hyperparameter '%s'\n",
                 Key.c_str());
    std::abort();
  }
  return static_cast<size_t>(Spec - hparamSpecs().data());
}

Status Hparams::setValue(const std::string &Key, const std::string &RawValue,
                         const std::string &Where) {
  const HparamSpec *Spec = findHparam(Key);
  if (!Spec) {
    std::string Suggestion = closestHparam(Key);
    return Status::error(Where + ": unknown key '" + Key + "'" +
                         (Suggestion.empty()
                              ? std::string(" (see --help)")
                              : " (did you mean '" + Suggestion + "'?)"));
  }
  Value V;
  Status S = parseHparamValue(*Spec, RawValue, Where, V);
  if (!S.ok())
    return S;
  V.Origin = Where;
  V.Given = true;
  Values[indexOf(Key)] = V;
  return Status::success();
}

Status Hparams::parseText(const std::string &Text, const std::string &Origin) {
  std::vector<std::string> Errors;
  std::map<std::string, std::string> Seen;
  std::stringstream Stream(Text);
  std::string Line;
  for (int LineNo = 1; std::getline(Stream, Line); ++LineNo) {
    std::string Where = Origin + ":" + std::to_string(LineNo);
    std::string Content = trim(Line);
    if (Content.empty() || Content[0] == '#')
      continue;
    size_t Eq = Content.find('=');
    if (Eq == std::string::npos) {
      Errors.push_back(Where + ": expects key=value, got '" + Content + "'");
      continue;
    }
    std::string Key = trim(Content.substr(0, Eq));
    auto [It, Inserted] = Seen.emplace(Key, Where);
    if (!Inserted) {
      Errors.push_back(Where + ": " + Key + ": duplicate key (first given at " +
                       It->second + ")");
      continue;
    }
    Status S = setValue(Key, Content.substr(Eq + 1), Where);
    if (!S.ok())
      Errors.push_back(S.message());
  }
  return Errors.empty() ? Status::success() : Status::error(joinLines(Errors));
}

Status Hparams::parseFile(const std::string &Path) {
  std::ifstream File(Path, std::ios::binary);
  if (!File)
    return Status::error(Path + ": cannot open the hyperparameter file");
  std::stringstream Buffer;
  Buffer << File.rdbuf();
  if (File.bad())
    return Status::error(Path + ": cannot read the hyperparameter file");
  return parseText(Buffer.str(), Path);
}

Status Hparams::parseFlags(const std::vector<std::string> &Flags) {
  std::vector<std::string> Errors;
  std::map<std::string, std::string> Seen;
  for (const std::string &Flag : Flags) {
    if (Flag.rfind("--", 0) != 0) {
      Errors.push_back("'" + Flag + "': expects --key=value");
      continue;
    }
    size_t Eq = Flag.find('=');
    std::string Key = Flag.substr(2, Eq == std::string::npos ? Eq : Eq - 2);
    std::string Where = "--" + Key;
    const HparamSpec *Spec = findHparam(Key);
    std::string Value;
    if (Eq != std::string::npos)
      Value = Flag.substr(Eq + 1);
    else if (Spec && Spec->Type == HparamType::Bool)
      Value = "True";
    else if (Spec) {
      Errors.push_back(Where + ": " + Key + ": expects --" + Key + "=VALUE");
      continue;
    }
    auto [It, Inserted] = Seen.emplace(Key, Flag);
    if (!Inserted) {
      Errors.push_back(Where + ": " + Key + ": duplicate flag (also given as " +
                       It->second + ")");
      continue;
    }
    Status S = setValue(Key, Value, Where);
    if (!S.ok())
      Errors.push_back(S.message());
  }
  return Errors.empty() ? Status::success() : Status::error(joinLines(Errors));
}

Status Hparams::validate() const {
  std::vector<std::string> Errors;
  int64_t Loop = getInt("iterations_per_loop");
  // Loop sinking runs whole loops on the device (seed 002): the run and the
  // checkpoints can only end at a loop boundary.
  for (const char *Key :
       {"stop_at_step", "save_checkpoints_steps", "eval_every_n_iters"})
    if (getInt(Key) % Loop != 0)
      Errors.push_back(origin(Key) + ": " + Key + "=" + text(Key) +
                       " is not a multiple of iterations_per_loop=" +
                       text("iterations_per_loop") + " (set at " +
                       origin("iterations_per_loop") + ")");
  // The luong schemes are staircase exponential decays (tensorflow/nmt);
  // combined with another decay type one of the two would be ignored.
  if (isSet("decay_scheme") &&
      getString("learning_rate_decay_type") != "exponential")
    Errors.push_back(origin("decay_scheme") +
                     ": decay_scheme: " + text("decay_scheme") +
                     " needs learning_rate_decay_type=exponential, not " +
                     text("learning_rate_decay_type") + " (set at " +
                     origin("learning_rate_decay_type") + ")");
  // Finetuning restores model_dir/ckpt_file_name; pretraining restores
  // nothing (it resumes train_dir's own checkpoint), so a checkpoint named
  // for it would be silently ignored.
  bool Finetune = getString("task_type") == "finetune";
  if (Finetune && !isSet("model_dir") && !isSet("ckpt_file_name"))
    Errors.push_back(origin("task_type") +
                     ": task_type=finetune needs model_dir (the directory "
                     "of the checkpoint to start from) or ckpt_file_name");
  if (!Finetune && isSet("ckpt_file_name"))
    Errors.push_back(origin("ckpt_file_name") +
                     ": ckpt_file_name=" + text("ckpt_file_name") +
                     " is only restored with task_type=finetune; pretrain "
                     "resumes the latest checkpoint of train_dir");
  // Both name the weights a run starts from; one would be ignored.
  if (Finetune && isSet("init_from_onnx"))
    Errors.push_back(origin("init_from_onnx") +
                     ": init_from_onnx=" + text("init_from_onnx") +
                     " and task_type=finetune (set at " + origin("task_type") +
                     ") both choose the starting weights; give one");
  for (const char *Key : {"train_dir", "model_dir"})
    if (isSet(Key) && getString(Key).find("://") != std::string::npos &&
        getString(Key).rfind("file://", 0) != 0)
      Errors.push_back(origin(Key) + ": " + Key + "=" + text(Key) +
                       ": only local directories and file:// URIs can be "
                       "used");
  return Errors.empty() ? Status::success() : Status::error(joinLines(Errors));
}

Status Hparams::applyCompiled(const std::string &CompiledConfig) {
  const std::string Origin = "compiled configuration";
  std::vector<std::string> Errors;
  std::stringstream Stream(CompiledConfig);
  std::string Line;
  for (int LineNo = 1; std::getline(Stream, Line); ++LineNo) {
    std::string Content = trim(Line);
    if (Content.empty() || Content[0] == '#')
      continue;
    std::string Where = Origin + ":" + std::to_string(LineNo);
    size_t Eq = Content.find('=');
    std::string Key = trim(Content.substr(0, Eq));
    const HparamSpec *Spec = findHparam(Key);
    if (Eq == std::string::npos || !Spec) {
      // train.bin and fastnnc share this table, so this means a model
      // compiled by another fastnn version.
      Errors.push_back(Where + ": '" + Content +
                       "' is not a key=value line this trainer knows; "
                       "recompile the model with this fastnnc");
      continue;
    }
    Value Compiled;
    Status S = parseHparamValue(*Spec, Content.substr(Eq + 1), Where, Compiled);
    if (!S.ok()) {
      Errors.push_back(S.message());
      continue;
    }
    Value &Current = Values[indexOf(Key)];
    if (Current.Given) {
      if (!sameValue(*Spec, Current, Compiled))
        Errors.push_back(Current.Origin + ": " + Key + "=" +
                         (Current.Set ? Current.Text : "None") +
                         " contradicts the compiled model, built with " + Key +
                         "=" + (Compiled.Set ? Compiled.Text : "None") +
                         " (recompile with fastnnc to change it)");
      continue;
    }
    Compiled.Origin = Origin;
    Current = Compiled;
  }
  return Errors.empty() ? Status::success() : Status::error(joinLines(Errors));
}

bool Hparams::isSet(const std::string &Key) const {
  return Values[indexOf(Key)].Set;
}

bool Hparams::isGiven(const std::string &Key) const {
  return Values[indexOf(Key)].Given;
}

const std::string &Hparams::origin(const std::string &Key) const {
  return Values[indexOf(Key)].Origin;
}

std::string Hparams::text(const std::string &Key) const {
  const Value &V = Values[indexOf(Key)];
  return V.Set ? V.Text : "None";
}

const std::string &Hparams::getString(const std::string &Key) const {
  return Values[indexOf(Key)].Text;
}

int64_t Hparams::getInt(const std::string &Key) const {
  return Values[indexOf(Key)].Int;
}

double Hparams::getFloat(const std::string &Key) const {
  return Values[indexOf(Key)].Float;
}

bool Hparams::getBool(const std::string &Key) const {
  return Values[indexOf(Key)].Bool;
}

std::string Hparams::configText() const {
  std::string Text;
  const char *Section = "";
  for (const HparamSpec &Spec : hparamSpecs()) {
    if (std::string(Section) != Spec.Section) {
      Section = Spec.Section;
      Text += std::string(Text.empty() ? "" : "\n") + "# " + Section + "\n";
    }
    const Value &V = Values[&Spec - hparamSpecs().data()];
    if (V.Origin != "default")
      Text += "# from " + V.Origin + "\n";
    Text += std::string(Spec.Name) + "=" + (V.Set ? V.Text : "None") + "\n";
  }
  return Text;
}

std::string Hparams::compiledConfigText() const {
  std::string Text;
  for (const HparamSpec &Spec : hparamSpecs())
    if (Spec.CompileTime)
      Text += std::string(Spec.Name) + "=" + text(Spec.Name) + "\n";
  return Text;
}

} // namespace fastnn::trainer
