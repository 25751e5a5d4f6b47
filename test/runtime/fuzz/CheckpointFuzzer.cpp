//===- CheckpointFuzzer.cpp - libFuzzer target for the checkpoint reader --===//
//
// Writes the input to a file and reads it with readCheckpoint. The input's
// last four bytes are replaced by the CRC-32C of the rest, as a writer
// would have stored it: without that, nearly every mutation would stop at
// the CRC check and the tensor records behind it would go unexplored.
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/Crc32c.h"
#include "fastnn/trainer/Checkpoint.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

using namespace fastnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const std::string Path =
      "/tmp/fastnn-checkpoint-fuzz-" + std::to_string(getpid());
  std::vector<uint8_t> File(Data, Data + Size);
  if (File.size() >= sizeof(uint32_t)) {
    uint32_t Crc = data::crc32c(File.data(), File.size() - sizeof(Crc));
    std::memcpy(File.data() + File.size() - sizeof(Crc), &Crc, sizeof(Crc));
  }
  FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return 0;
  std::fwrite(File.data(), 1, File.size(), F);
  std::fclose(F);
  trainer::Checkpoint C;
  (void)trainer::readCheckpoint(Path, C);
  std::remove(Path.c_str());
  return 0;
}
