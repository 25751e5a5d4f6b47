//===- Convert.cpp - fastnn-data convert ----------------------------------===//
//
// Turns MNIST-style IDX files, CIFAR-10 binary batches or a folder of class
// sub-folders into TFRecord shards of FastNN's schema. Record i of a split
// goes to shard i % N, so shards differ by at most one record (the seed asks
// for balanced files so that workers get balanced shares).
//
//===----------------------------------------------------------------------===//

#include "Tool.h"

#include "fastnn/data/Example.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/Preprocess.h"
#include "fastnn/data/RecordIO.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <zlib.h>

namespace fastnn::tool {
using data::Status;
namespace fs = std::filesystem;

namespace {

struct Sample {
  std::string Encoded;
  std::string Format;
  int64_t Label = 0;
  int Height = 0, Width = 0;
};

using Producer = std::function<Status(size_t, Sample &)>;

struct SplitOptions {
  std::string OutDir, Name;
  int Shards = 1;
  data::Compression Comp = data::Compression::None;
  bool ShowProgress = true;
};

std::string shardName(const SplitOptions &O, const std::string &Split, int K) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "-%05d-of-%05d.tfrecord", K, O.Shards);
  return (fs::path(O.OutDir) / (O.Name + "-" + Split + Buf)).string();
}

Status writeSplit(const SplitOptions &O, const std::string &Split, size_t Count,
                  const Producer &Produce) {
  std::vector<std::unique_ptr<data::RecordWriter>> Writers;
  for (int K = 0; K < O.Shards; ++K) {
    Status S;
    Writers.push_back(
        data::RecordWriter::open(shardName(O, Split, K), O.Comp, S));
    if (!Writers.back())
      return S;
  }
  Progress Bar(Split, Count, O.ShowProgress);
  Sample Smp;
  for (size_t I = 0; I < Count; ++I) {
    if (Status S = Produce(I, Smp); !S.ok())
      return S;
    std::string Rec = data::makeImageExample(Smp.Encoded, Smp.Format, Smp.Label,
                                             Smp.Height, Smp.Width);
    if (Status S = Writers[I % O.Shards]->write(Rec); !S.ok())
      return S;
    Bar.update(I + 1);
  }
  for (auto &W : Writers)
    if (Status S = W->close(); !S.ok())
      return S;
  std::printf("%s: %zu records in %d shard(s) %s\n", Split.c_str(), Count,
              O.Shards, shardName(O, Split, 0).c_str());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// IDX (MNIST, Fashion-MNIST)
//===----------------------------------------------------------------------===//

/// Reads a whole file, gunzipping if it is gzip (gzread passes plain files
/// through), refusing more than \p Limit bytes.
Status readMaybeGzip(const std::string &Path, size_t Limit, std::string &Out) {
  gzFile F = gzopen(Path.c_str(), "rb");
  if (!F)
    return Status::error(Path + ": cannot open");
  Out.clear();
  char Buf[1 << 16];
  for (;;) {
    int N = gzread(F, Buf, sizeof(Buf));
    if (N < 0) {
      int Code = 0;
      std::string Msg = gzerror(F, &Code);
      gzclose(F);
      return Status::error(Path + ": byte offset " +
                           std::to_string(Out.size()) + ": " + Msg);
    }
    if (N == 0)
      break;
    Out.append(Buf, N);
    if (Out.size() > Limit) {
      gzclose(F);
      return Status::error(Path + ": larger than " + std::to_string(Limit) +
                           " bytes");
    }
  }
  gzclose(F);
  return Status::success();
}

uint32_t be32(const std::string &S, size_t At) {
  auto B = [&](size_t I) { return uint32_t(static_cast<unsigned char>(S[I])); };
  return B(At) << 24 | B(At + 1) << 16 | B(At + 2) << 8 | B(At + 3);
}

struct IdxImages {
  std::string Data; // Header included; pixels start at 16.
  uint32_t Count = 0, Rows = 0, Cols = 0;
};

std::string findIdx(const std::string &Dir, const std::string &Base) {
  for (const char *Ext : {".gz", ""}) {
    fs::path P = fs::path(Dir) / (Base + Ext);
    if (fs::exists(P))
      return P.string();
  }
  return (fs::path(Dir) / (Base + ".gz")).string();
}

Status loadIdx(const std::string &Dir, const std::string &Prefix,
               IdxImages &Img, std::string &Labels) {
  std::string IPath = findIdx(Dir, Prefix + "-images-idx3-ubyte");
  std::string LPath = findIdx(Dir, Prefix + "-labels-idx1-ubyte");
  if (Status S = readMaybeGzip(IPath, size_t(1) << 32, Img.Data); !S.ok())
    return S;
  if (Img.Data.size() < 16 || be32(Img.Data, 0) != 0x803)
    return Status::error(IPath + ": byte offset 0: not an IDX3 image file "
                                 "(magic 0x00000803)");
  Img.Count = be32(Img.Data, 4);
  Img.Rows = be32(Img.Data, 8);
  Img.Cols = be32(Img.Data, 12);
  uint64_t Want = 16 + uint64_t(Img.Count) * Img.Rows * Img.Cols;
  if (!Img.Rows || !Img.Cols || Img.Rows > 65535 || Img.Cols > 65535 ||
      Img.Data.size() != Want)
    return Status::error(
        IPath + ": byte offset 4: header says " + std::to_string(Img.Count) +
        " images of " + std::to_string(Img.Rows) + "x" +
        std::to_string(Img.Cols) + " (" + std::to_string(Want) +
        " bytes) but the file has " + std::to_string(Img.Data.size()));
  if (Status S = readMaybeGzip(LPath, size_t(1) << 32, Labels); !S.ok())
    return S;
  if (Labels.size() < 8 || be32(Labels, 0) != 0x801)
    return Status::error(LPath + ": byte offset 0: not an IDX1 label file "
                                 "(magic 0x00000801)");
  if (be32(Labels, 4) != Img.Count || Labels.size() != 8 + size_t(Img.Count))
    return Status::error(
        LPath + ": byte offset 4: " + std::to_string(be32(Labels, 4)) +
        " labels for " + std::to_string(Img.Count) + " images");
  return Status::success();
}

Status convertIdx(const Args &A, const SplitOptions &O) {
  std::string Dir = A.get("input", "");
  for (const auto &[Prefix, Split] :
       {std::pair<std::string, std::string>{"train", "train"},
        {"t10k", "test"}}) {
    IdxImages Img;
    std::string Labels;
    if (Status S = loadIdx(Dir, Prefix, Img, Labels); !S.ok())
      return S;
    const size_t Px = size_t(Img.Rows) * Img.Cols;
    Status S = writeSplit(O, Split, Img.Count, [&](size_t I, Sample &Smp) {
      Smp.Format = "png";
      Smp.Label = static_cast<unsigned char>(Labels[8 + I]);
      Smp.Height = static_cast<int>(Img.Rows);
      Smp.Width = static_cast<int>(Img.Cols);
      return data::encodePng(
          reinterpret_cast<const uint8_t *>(Img.Data.data()) + 16 + I * Px,
          Smp.Height, Smp.Width, 1, Smp.Encoded);
    });
    if (!S.ok())
      return S;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// CIFAR-10 binary batches
//===----------------------------------------------------------------------===//

Status convertCifar(const Args &A, const SplitOptions &O) {
  fs::path Dir = A.get("input", "");
  if (fs::exists(Dir / "cifar-10-batches-bin"))
    Dir /= "cifar-10-batches-bin";
  const size_t RecBytes = 1 + 3 * 32 * 32;
  for (const auto &[Split, Files] :
       {std::pair<std::string, std::vector<std::string>>{
            "train",
            {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
             "data_batch_4.bin", "data_batch_5.bin"}},
        {"test", {"test_batch.bin"}}}) {
    std::string All;
    for (const std::string &F : Files) {
      std::string Path = (Dir / F).string();
      std::string Buf;
      if (Status S = readMaybeGzip(Path, size_t(1) << 30, Buf); !S.ok())
        return S;
      if (Buf.size() % RecBytes)
        return Status::error(Path + ": byte offset " +
                             std::to_string(Buf.size() / RecBytes * RecBytes) +
                             ": truncated record (size is not a multiple of " +
                             std::to_string(RecBytes) + ")");
      for (size_t I = 0; I < Buf.size(); I += RecBytes)
        if (static_cast<unsigned char>(Buf[I]) > 9)
          return Status::error(
              Path + ": byte offset " + std::to_string(I) + ": label " +
              std::to_string(static_cast<unsigned char>(Buf[I])) +
              " is not a CIFAR-10 class");
      All += Buf;
    }
    std::vector<uint8_t> Hwc(32 * 32 * 3);
    Status S =
        writeSplit(O, Split, All.size() / RecBytes, [&](size_t I, Sample &Smp) {
          const auto *R =
              reinterpret_cast<const uint8_t *>(All.data() + I * RecBytes);
          Smp.Label = R[0];
          // Stored as three 32x32 planes (R, G, B).
          for (int P = 0; P < 32 * 32; ++P)
            for (int C = 0; C < 3; ++C)
              Hwc[P * 3 + C] = R[1 + C * 1024 + P];
          Smp.Format = "png";
          Smp.Height = Smp.Width = 32;
          return data::encodePng(Hwc.data(), 32, 32, 3, Smp.Encoded);
        });
    if (!S.ok())
      return S;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Folder of class sub-folders (flowers style)
//===----------------------------------------------------------------------===//

Status convertFolder(const Args &A, const SplitOptions &O) {
  fs::path Dir = A.get("input", "");
  std::error_code Ec;
  if (!fs::is_directory(Dir, Ec))
    return Status::error(Dir.string() + ": not a directory");
  std::vector<std::string> Classes;
  for (const auto &E : fs::directory_iterator(Dir, Ec))
    if (E.is_directory())
      Classes.push_back(E.path().filename().string());
  std::sort(Classes.begin(), Classes.end());
  if (Classes.empty())
    return Status::error(Dir.string() +
                         ": no class sub-directories (expected DIR/<class>/"
                         "*.jpg|png)");
  std::vector<std::pair<std::string, int>> Files;
  for (size_t C = 0; C < Classes.size(); ++C) {
    std::vector<std::string> Mine;
    for (const auto &E : fs::directory_iterator(Dir / Classes[C], Ec)) {
      std::string Ext = E.path().extension().string();
      for (char &Ch : Ext)
        Ch = static_cast<char>(std::tolower(static_cast<unsigned char>(Ch)));
      if (E.is_regular_file() &&
          (Ext == ".jpg" || Ext == ".jpeg" || Ext == ".png"))
        Mine.push_back(E.path().string());
    }
    std::sort(Mine.begin(), Mine.end());
    for (auto &F : Mine)
      Files.emplace_back(F, static_cast<int>(C));
  }
  int64_t Seed = 0;
  if (Status S = A.getInt("seed", 0, 0, INT64_MAX, Seed); !S.ok())
    return S;
  // TF-slim's download_and_convert_flowers shuffles before splitting.
  data::Rng R(static_cast<uint64_t>(Seed));
  for (size_t I = Files.size(); I > 1; --I)
    std::swap(Files[I - 1], Files[R.below(I)]);

  size_t NumVal = 0;
  if (A.has("validation-count")) {
    int64_t V = 0;
    if (Status S = A.getInt("validation-count", 0, 0, Files.size(), V); !S.ok())
      return S;
    NumVal = static_cast<size_t>(V);
  } else {
    double F = 0;
    if (Status S = A.getDouble("validation-fraction", 0.1, 0, 1, F); !S.ok())
      return S;
    NumVal = static_cast<size_t>(F * Files.size() + 0.5);
  }

  std::ofstream Labels(fs::path(O.OutDir) / "labels.txt");
  for (size_t C = 0; C < Classes.size(); ++C)
    Labels << C << ":" << Classes[C] << "\n";

  data::ImageDecoder Dec;
  auto produce = [&](size_t Base) {
    return [&, Base](size_t I, Sample &Smp) -> Status {
      const auto &[Path, Label] = Files[Base + I];
      std::ifstream In(Path, std::ios::binary);
      std::ostringstream Buf;
      Buf << In.rdbuf();
      Smp.Encoded = Buf.str();
      Smp.Label = Label;
      data::ImageFormat Fmt =
          data::detectImageFormat(Smp.Encoded.data(), Smp.Encoded.size());
      Smp.Format = Fmt == data::ImageFormat::Png ? "png" : "jpeg";
      Status S = Dec.readHeader(Smp.Encoded.data(), Smp.Encoded.size(),
                                Smp.Height, Smp.Width);
      if (!S.ok())
        return Status::error(Path + ": byte offset 0: " + S.message());
      return Status::success();
    };
  };
  if (Status S = writeSplit(O, "train", Files.size() - NumVal, produce(NumVal));
      !S.ok())
    return S;
  return writeSplit(O, "validation", NumVal, produce(0));
}

} // namespace

int runConvert(const Args &A) {
  auto fail = [](const Status &S) {
    std::fprintf(stderr, "fastnn-data convert: %s\n", S.message().c_str());
    return 1;
  };
  if (Status S = A.check({"format", "input", "output", "name", "shards",
                          "compression", "validation-fraction",
                          "validation-count", "seed", "no-progress"});
      !S.ok())
    return fail(S);
  std::string Format = A.get("format", "");
  if (!A.has("input") || !A.has("output") || Format.empty())
    return fail(Status::error("needs --format, --input and --output"));
  SplitOptions O;
  O.OutDir = A.get("output", "");
  O.ShowProgress = !A.has("no-progress");
  int64_t Shards = 0;
  if (Status S = A.getInt("shards", 1, 1, 100000, Shards); !S.ok())
    return fail(S);
  O.Shards = static_cast<int>(Shards);
  if (Status S = data::parseCompression(A.get("compression", "none"), O.Comp);
      !S.ok())
    return fail(S);
  std::error_code Ec;
  fs::create_directories(O.OutDir, Ec);
  if (Ec)
    return fail(Status::error(O.OutDir + ": cannot create: " + Ec.message()));
  Status S;
  if (Format == "idx") {
    O.Name = A.get("name", "mnist");
    S = convertIdx(A, O);
  } else if (Format == "cifar10") {
    O.Name = A.get("name", "cifar10");
    S = convertCifar(A, O);
  } else if (Format == "folder") {
    O.Name = A.get("name", fs::path(A.get("input", "")).filename().string());
    if (O.Name.empty())
      O.Name = "images";
    S = convertFolder(A, O);
  } else {
    S = Status::error("unknown --format '" + Format +
                      "' (expected idx, cifar10 or folder)");
  }
  return S.ok() ? 0 : fail(S);
}

} // namespace fastnn::tool
