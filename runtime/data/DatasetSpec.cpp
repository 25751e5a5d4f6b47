//===- DatasetSpec.cpp - Dataset specs ------------------------------------===//

#include "fastnn/data/DatasetSpec.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace fastnn::data {
namespace {

size_t editDistance(std::string_view A, std::string_view B) {
  std::vector<size_t> Row(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Row[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    size_t Diag = Row[0];
    Row[0] = I;
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Up = Row[J];
      Row[J] = std::min(
          {Row[J] + 1, Row[J - 1] + 1, Diag + (A[I - 1] == B[J - 1] ? 0 : 1)});
      Diag = Up;
    }
  }
  return Row[B.size()];
}

std::string_view trim(std::string_view S) {
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.front())))
    S.remove_prefix(1);
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.back())))
    S.remove_suffix(1);
  return S;
}

bool parseInt(std::string_view S, int64_t &Out) {
  std::string T(S);
  if (T.empty())
    return false;
  char *End = nullptr;
  errno = 0;
  long long V = std::strtoll(T.c_str(), &End, 10);
  if (errno || *End)
    return false;
  Out = V;
  return true;
}

const char *const SpecKeys[] = {
    "name",           "image_feature", "image_kind",    "format_feature",
    "default_format", "label_feature", "default_label", "label_offset",
    "height",         "width",         "channels",      "float_scale",
    "num_classes"};

} // namespace

bool builtinDatasetSpec(const std::string &Name, DatasetSpec &Out) {
  DatasetSpec S;
  S.Name = Name;
  if (Name == "mock") {
    S.Mock = true;
    S.Height = 224, S.Width = 224, S.Channels = 3;
    S.NumClasses = 0; // The trainer's num_classes decides.
  } else if (Name == "cifar10") {
    S.Height = 32, S.Width = 32, S.Channels = 3, S.NumClasses = 10;
  } else if (Name == "mnist") {
    S.Height = 28, S.Width = 28, S.Channels = 1, S.NumClasses = 10;
  } else if (Name == "flowers") {
    S.Channels = 3, S.NumClasses = 5;
    S.DefaultFormat = "jpeg";
  } else {
    return false;
  }
  Out = S;
  return true;
}

Status parseDatasetSpec(std::string_view Text, const std::string &Source,
                        DatasetSpec &Out) {
  DatasetSpec S;
  S.Name = Source;
  size_t LineNo = 0;
  while (!Text.empty()) {
    size_t Nl = Text.find('\n');
    std::string_view Line = Text.substr(0, Nl);
    Text =
        Nl == std::string_view::npos ? std::string_view() : Text.substr(Nl + 1);
    ++LineNo;
    if (size_t Hash = Line.find('#'); Hash != std::string_view::npos)
      Line = Line.substr(0, Hash);
    Line = trim(Line);
    if (Line.empty())
      continue;
    std::string Where = Source + ":" + std::to_string(LineNo) + ": ";
    size_t Eq = Line.find('=');
    if (Eq == std::string_view::npos)
      return Status::error(Where + "expected 'key = value'");
    std::string Key(trim(Line.substr(0, Eq)));
    std::string Value(trim(Line.substr(Eq + 1)));
    int64_t I = 0;
    auto needInt = [&](int64_t Lo, int64_t Hi) -> Status {
      if (!parseInt(Value, I) || I < Lo || I > Hi)
        return Status::error(Where + "'" + Key + "' expects an integer in [" +
                             std::to_string(Lo) + ", " + std::to_string(Hi) +
                             "], got '" + Value + "'");
      return Status::success();
    };
    Status Bad;
    if (Key == "name") {
      S.Name = Value;
    } else if (Key == "image_feature") {
      S.ImageFeature = Value;
    } else if (Key == "image_kind") {
      if (Value == "encoded")
        S.Kind = ImageKind::Encoded;
      else if (Value == "raw")
        S.Kind = ImageKind::Raw;
      else if (Value == "float")
        S.Kind = ImageKind::FloatList;
      else
        return Status::error(Where +
                             "image_kind must be encoded, raw or "
                             "float, got '" +
                             Value + "'");
    } else if (Key == "format_feature") {
      S.FormatFeature = Value;
    } else if (Key == "default_format") {
      S.DefaultFormat = Value;
    } else if (Key == "label_feature") {
      S.LabelFeature = Value;
    } else if (Key == "default_label") {
      Bad = needInt(INT32_MIN, INT32_MAX);
      S.DefaultLabel = I;
    } else if (Key == "label_offset") {
      Bad = needInt(INT32_MIN, INT32_MAX);
      S.LabelOffset = I;
    } else if (Key == "height" || Key == "width" || Key == "channels") {
      Bad = needInt(1, Key == "channels" ? 4 : 65535);
      (Key == "height"  ? S.Height
       : Key == "width" ? S.Width
                        : S.Channels) = static_cast<int>(I);
    } else if (Key == "float_scale") {
      char *End = nullptr;
      float F = std::strtof(Value.c_str(), &End);
      if (Value.empty() || *End || !(F > 0))
        return Status::error(Where +
                             "float_scale expects a positive number, "
                             "got '" +
                             Value + "'");
      S.FloatScale = F;
    } else if (Key == "num_classes") {
      Bad = needInt(0, INT32_MAX);
      S.NumClasses = static_cast<int>(I);
    } else {
      std::string Best;
      size_t BestD = 4;
      for (const char *K : SpecKeys)
        if (size_t D = editDistance(Key, K); D < BestD)
          BestD = D, Best = K;
      return Status::error(
          Where + "unknown key '" + Key + "'" +
          (Best.empty() ? std::string() : " (did you mean '" + Best + "'?)"));
    }
    if (!Bad.ok())
      return Bad;
  }
  if (S.Kind != ImageKind::Encoded && (!S.Height || !S.Width || !S.Channels))
    return Status::error(Source + ": raw and float images need height, width "
                                  "and channels");
  Out = S;
  return Status::success();
}

Status loadDatasetSpec(const std::string &NameOrPath, DatasetSpec &Out) {
  if (builtinDatasetSpec(NameOrPath, Out))
    return Status::success();
  std::ifstream In(NameOrPath, std::ios::binary);
  if (!In)
    return Status::error("unknown dataset '" + NameOrPath +
                         "': not a built-in (mock, cifar10, mnist, flowers) "
                         "and no spec file of that name");
  std::ostringstream Text;
  Text << In.rdbuf();
  return parseDatasetSpec(Text.str(), NameOrPath, Out);
}

Status extractSample(const Example &E, const DatasetSpec &Spec,
                     SampleView &Out) {
  const auto &Map = E.features().feature();
  auto It = Map.find(Spec.ImageFeature);
  if (It == Map.end())
    return Status::error("record has no feature '" + Spec.ImageFeature + "'");
  const Feature &Img = It->second;
  Out.Kind = Spec.Kind;
  if (Spec.Kind == ImageKind::FloatList) {
    if (!Img.has_float_list())
      return Status::error("feature '" + Spec.ImageFeature +
                           "' is not a float list");
    Out.Floats = Img.float_list().value().data();
    Out.FloatCount = static_cast<size_t>(Img.float_list().value_size());
    size_t Want = size_t(Spec.Height) * Spec.Width * Spec.Channels;
    if (Out.FloatCount != Want)
      return Status::error("feature '" + Spec.ImageFeature + "' has " +
                           std::to_string(Out.FloatCount) +
                           " floats, the spec's shape needs " +
                           std::to_string(Want));
  } else {
    if (!Img.has_bytes_list() || Img.bytes_list().value_size() != 1)
      return Status::error("feature '" + Spec.ImageFeature +
                           "' is not a single bytes value");
    Out.Bytes = Img.bytes_list().value(0);
    if (Spec.Kind == ImageKind::Raw) {
      size_t Want = size_t(Spec.Height) * Spec.Width * Spec.Channels;
      if (Out.Bytes.size() != Want)
        return Status::error("feature '" + Spec.ImageFeature + "' has " +
                             std::to_string(Out.Bytes.size()) +
                             " bytes, the spec's shape needs " +
                             std::to_string(Want));
    }
  }
  Out.Format = Spec.DefaultFormat;
  if (auto F = Map.find(Spec.FormatFeature);
      F != Map.end() && F->second.has_bytes_list() &&
      F->second.bytes_list().value_size() > 0)
    Out.Format = F->second.bytes_list().value(0);

  Out.Label = Spec.DefaultLabel;
  if (auto L = Map.find(Spec.LabelFeature); L != Map.end()) {
    if (L->second.has_int64_list() && L->second.int64_list().value_size() > 0)
      Out.Label = L->second.int64_list().value(0);
    else if (L->second.has_float_list() &&
             L->second.float_list().value_size() > 0) {
      float F = L->second.float_list().value(0);
      if (!(F > -2147483648.0f && F < 2147483648.0f))
        return Status::error("label feature '" + Spec.LabelFeature +
                             "' holds a float that is no class index");
      Out.Label = static_cast<int64_t>(F);
    } else
      return Status::error("label feature '" + Spec.LabelFeature +
                           "' holds no int64 or float value");
  }
  if (Out.Label < INT32_MIN || Out.Label > INT32_MAX)
    return Status::error("label " + std::to_string(Out.Label) +
                         " does not fit a 32-bit class index");
  Out.Label += Spec.LabelOffset;
  if (Spec.NumClasses > 0 && (Out.Label < 0 || Out.Label >= Spec.NumClasses))
    return Status::error("label " + std::to_string(Out.Label) +
                         " is outside [0, " + std::to_string(Spec.NumClasses) +
                         ")");
  return Status::success();
}

} // namespace fastnn::data
