//===- main.cpp - fastnn-data: convert, inspect, benchmark, index ---------===//

#include "Tool.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fastnn::tool {

std::string Args::get(const std::string &K, const std::string &Default) const {
  auto It = Flags.find(K);
  return It == Flags.end() ? Default : It->second;
}

data::Status Args::getInt(const std::string &K, int64_t Default, int64_t Lo,
                          int64_t Hi, int64_t &Out) const {
  Out = Default;
  auto It = Flags.find(K);
  if (It == Flags.end())
    return data::Status::success();
  char *End = nullptr;
  long long V = std::strtoll(It->second.c_str(), &End, 10);
  if (It->second.empty() || *End || V < Lo || V > Hi)
    return data::Status::error("--" + K + " expects an integer in [" +
                               std::to_string(Lo) + ", " + std::to_string(Hi) +
                               "], got '" + It->second + "'");
  Out = V;
  return data::Status::success();
}

data::Status Args::getDouble(const std::string &K, double Default, double Lo,
                             double Hi, double &Out) const {
  Out = Default;
  auto It = Flags.find(K);
  if (It == Flags.end())
    return data::Status::success();
  char *End = nullptr;
  double V = std::strtod(It->second.c_str(), &End);
  if (It->second.empty() || *End || !(V >= Lo && V <= Hi))
    return data::Status::error("--" + K + " expects a number in [" +
                               std::to_string(Lo) + ", " + std::to_string(Hi) +
                               "], got '" + It->second + "'");
  Out = V;
  return data::Status::success();
}

data::Status Args::check(const std::vector<std::string> &Known) const {
  for (const auto &[K, V] : Flags) {
    bool Ok = false;
    for (const std::string &N : Known)
      Ok |= N == K;
    if (!Ok) {
      std::string List;
      for (const std::string &N : Known)
        List += (List.empty() ? "--" : ", --") + N;
      return data::Status::error("unknown flag --" + K + " (known: " + List +
                                 ")");
    }
  }
  return data::Status::success();
}

Progress::Progress(std::string Label, uint64_t Total, bool Enabled)
    : Label(std::move(Label)), Total(Total),
      Enabled(Enabled && isatty(STDERR_FILENO)) {}

Progress::~Progress() {
  if (Enabled && LastPermille >= 0)
    std::fputc('\n', stderr);
}

void Progress::update(uint64_t Done) {
  if (!Enabled || Total == 0)
    return;
  int Permille = static_cast<int>(Done * 1000 / Total);
  if (Permille == LastPermille)
    return;
  LastPermille = Permille;
  const int Width = 30;
  int Fill = Permille * Width / 1000;
  std::fprintf(stderr, "\r%s [%.*s%*s] %llu/%llu %3d%%", Label.c_str(), Fill,
               "##############################", Width - Fill, "",
               static_cast<unsigned long long>(Done),
               static_cast<unsigned long long>(Total), Permille / 10);
  std::fflush(stderr);
}

} // namespace fastnn::tool

static void usage(std::FILE *Out) {
  std::fputs(
      "usage: fastnn-data <command> [flags]\n"
      "\n"
      "  convert --format=idx|cifar10|folder --input=PATH --output=DIR\n"
      "          [--name=PREFIX] [--shards=N] [--compression=none|gzip|zlib]\n"
      "          [--validation-fraction=F | --validation-count=N] [--seed=S]\n"
      "          [--no-progress]\n"
      "      Writes N balanced TFRecord shards per split with FastNN's schema\n"
      "      (image/encoded, image/format, image/class/label).\n"
      "      idx: a directory with {train,t10k}-{images-idx3,labels-idx1}-\n"
      "           ubyte[.gz] (MNIST, Fashion-MNIST) -> splits train, test\n"
      "      cifar10: a directory with data_batch_{1..5}.bin, test_batch.bin\n"
      "           -> splits train, test\n"
      "      folder: one sub-directory of JPEG/PNG images per class\n"
      "           -> splits train, validation (+ labels.txt)\n"
      "\n"
      "  inspect FILE... [--compression=auto|none|gzip|zlib]\n"
      "          [--dataset=SPEC] [--decode] [--skip-corrupt]\n"
      "      Counts records, verifies every CRC, lists the features of the\n"
      "      first record; with --dataset, label counts; with --decode, also\n"
      "      decodes every image.\n"
      "\n"
      "  bench --dataset=SPEC FILE... [--batch=N] [--threads=N]\n"
      "          [--preprocessing=NAME] [--height=H --width=W --channels=C]\n"
      "          [--eval] [--seconds=S] [--prefetch=N] [--shuffle=N]\n"
      "      Runs the input pipeline alone and prints images/s and stats.\n"
      "\n"
      "  index FILE... [--force] [--max-record-bytes=N]\n"
      "      Builds each uncompressed file's record index FILE.fnnidx (record\n"
      "      offsets, checked against the file's size and mtime) for\n"
      "      shard_by=record, or says it is up to date.\n",
      Out);
}

int main(int Argc, char **Argv) {
  using namespace fastnn::tool;
  if (Argc < 2 || !std::strcmp(Argv[1], "--help") ||
      !std::strcmp(Argv[1], "-h")) {
    usage(Argc < 2 ? stderr : stdout);
    return Argc < 2 ? 2 : 0;
  }
  Args A;
  for (int I = 2; I < Argc; ++I) {
    std::string S = Argv[I];
    if (S.rfind("--", 0) == 0) {
      size_t Eq = S.find('=');
      if (Eq == std::string::npos)
        A.Flags[S.substr(2)] = "";
      else
        A.Flags[S.substr(2, Eq - 2)] = S.substr(Eq + 1);
    } else {
      A.Positional.push_back(S);
    }
  }
  std::string Cmd = Argv[1];
  if (Cmd == "convert")
    return runConvert(A);
  if (Cmd == "inspect")
    return runInspect(A);
  if (Cmd == "bench")
    return runBench(A);
  if (Cmd == "index")
    return runIndex(A);
  std::fprintf(stderr, "fastnn-data: unknown command '%s'\n", Cmd.c_str());
  usage(stderr);
  return 2;
}
