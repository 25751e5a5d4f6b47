//===- Inspect.cpp - fastnn-data inspect ----------------------------------===//

#include "Tool.h"

#include "fastnn/data/DatasetSpec.h"
#include "fastnn/data/Example.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/RecordIO.h"

#include <cstdio>
#include <map>

namespace fastnn::tool {
using data::Status;

namespace {

void printFeatures(const data::Example &E) {
  std::map<std::string, const data::Feature *> Sorted;
  for (const auto &[K, F] : E.features().feature())
    Sorted[K] = &F;
  for (const auto &[K, F] : Sorted) {
    if (F->has_bytes_list()) {
      const auto &L = F->bytes_list().value();
      std::printf("  %-24s bytes[%d]", K.c_str(), L.size());
      if (L.size() > 0) {
        const std::string &V = L.Get(0);
        bool Text = V.size() <= 32;
        for (char C : V)
          Text &= C >= 32 && C < 127;
        if (Text)
          std::printf(" \"%s\"", V.c_str());
        else
          std::printf(" (%zu bytes)", V.size());
      }
    } else if (F->has_int64_list()) {
      const auto &L = F->int64_list().value();
      std::printf("  %-24s int64[%d]", K.c_str(), L.size());
      for (int I = 0; I < L.size() && I < 8; ++I)
        std::printf(" %lld", static_cast<long long>(L.Get(I)));
    } else if (F->has_float_list()) {
      const auto &L = F->float_list().value();
      std::printf("  %-24s float[%d]", K.c_str(), L.size());
      for (int I = 0; I < L.size() && I < 8; ++I)
        std::printf(" %g", L.Get(I));
    } else {
      std::printf("  %-24s (empty)", K.c_str());
    }
    std::printf("\n");
  }
}

} // namespace

int runInspect(const Args &A) {
  if (Status S = A.check({"compression", "dataset", "decode", "skip-corrupt"});
      !S.ok()) {
    std::fprintf(stderr, "fastnn-data inspect: %s\n", S.message().c_str());
    return 2;
  }
  if (A.Positional.empty()) {
    std::fprintf(stderr, "fastnn-data inspect: no files given\n");
    return 2;
  }
  data::DatasetSpec Spec;
  bool HaveSpec = A.has("dataset");
  if (HaveSpec) {
    if (Status S = data::loadDatasetSpec(A.get("dataset", ""), Spec); !S.ok()) {
      std::fprintf(stderr, "fastnn-data inspect: %s\n", S.message().c_str());
      return 2;
    }
  }
  const bool Decode = A.has("decode"), Skip = A.has("skip-corrupt");
  std::string CompName = A.get("compression", "auto");
  bool Bad = false;
  uint64_t Total = 0;
  std::map<int64_t, uint64_t> LabelCounts;
  data::ImageDecoder Dec;
  std::vector<uint8_t> Pixels;
  for (const std::string &Path : A.Positional) {
    data::RecordReaderOptions RO;
    Status S = CompName == "auto" ? data::detectCompression(Path, RO.Comp)
                                  : data::parseCompression(CompName, RO.Comp);
    std::unique_ptr<data::RecordReader> R;
    if (S.ok())
      R = data::RecordReader::open(Path, RO, S);
    if (!R) {
      std::fprintf(stderr, "error: %s\n", S.message().c_str());
      Bad = true;
      continue;
    }
    uint64_t Count = 0, Bytes = 0, Corrupt = 0, BadImages = 0;
    std::string Rec;
    data::Example E;
    for (;;) {
      uint64_t Offset = R->offset();
      auto Res = R->next(Rec, S);
      if (Res == data::RecordReader::Result::End)
        break;
      if (Res == data::RecordReader::Result::Corrupt) {
        std::fprintf(stderr, "error: %s\n", S.message().c_str());
        ++Corrupt;
        Bad = true;
        if (Skip && R->canContinue())
          continue;
        break;
      }
      ++Count;
      Bytes += Rec.size();
      bool First = Count == 1;
      if (!First && !HaveSpec && !Decode)
        continue;
      std::string Where =
          Path + ": byte offset " + std::to_string(Offset) + ": ";
      if (Status PS = data::parseExample(Rec, E); !PS.ok()) {
        std::fprintf(stderr, "error: %s%s\n", Where.c_str(),
                     PS.message().c_str());
        Bad = true;
        continue;
      }
      if (First) {
        std::printf("%s (%s): first record features:\n", Path.c_str(),
                    data::compressionName(RO.Comp));
        printFeatures(E);
      }
      if (HaveSpec) {
        data::SampleView V;
        if (Status XS = data::extractSample(E, Spec, V); !XS.ok()) {
          std::fprintf(stderr, "error: %s%s\n", Where.c_str(),
                       XS.message().c_str());
          Bad = true;
          continue;
        }
        LabelCounts[V.Label]++;
        if (Decode && V.Kind == data::ImageKind::Encoded) {
          int H, W;
          int C = Spec.Channels ? Spec.Channels : 3;
          if (Status DS =
                  Dec.decode(V.Bytes.data(), V.Bytes.size(), C, Pixels, H, W);
              !DS.ok()) {
            std::fprintf(stderr, "error: %s%s\n", Where.c_str(),
                         DS.message().c_str());
            ++BadImages;
            Bad = true;
          }
        }
      }
    }
    std::printf("%s: %llu records, %llu bytes of data, %llu corrupt",
                Path.c_str(), static_cast<unsigned long long>(Count),
                static_cast<unsigned long long>(Bytes),
                static_cast<unsigned long long>(Corrupt));
    if (Decode)
      std::printf(", %llu undecodable images",
                  static_cast<unsigned long long>(BadImages));
    std::printf("\n");
    Total += Count;
  }
  std::printf("total: %llu records in %zu file(s)\n",
              static_cast<unsigned long long>(Total), A.Positional.size());
  if (HaveSpec) {
    std::printf("labels:");
    for (const auto &[L, N] : LabelCounts)
      std::printf(" %lld:%llu", static_cast<long long>(L),
                  static_cast<unsigned long long>(N));
    std::printf("\n");
  }
  return Bad ? 1 : 0;
}

} // namespace fastnn::tool
