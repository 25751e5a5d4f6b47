//===- CheckpointFile.cpp - The checkpoint file format --------------------===//
//
// Apart from Checkpoint.cpp so that fastnnc, which writes the initial
// weights of --weights=external in this format, links no device code.
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/AtomicFile.h"
#include "fastnn/trainer/Checkpoint.h"

#include "fastnn/data/Crc32c.h"
#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/abi.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fastnn::trainer {

namespace fs = std::filesystem;
using runtime::shapeText;

namespace {

constexpr char Magic[8] = {'F', 'N', 'N', 'C', 'K', 'P', 'T', '\0'};
constexpr size_t HeaderBytes = 48;

template <typename T> void put(std::string &Out, T Value) {
  Out.append(reinterpret_cast<const char *>(&Value), sizeof(Value));
}

/// Reads the payload, checking every length against the end.
class Cursor {
public:
  Cursor(const unsigned char *Begin, const unsigned char *End)
      : At(Begin), End(End) {}
  template <typename T> bool get(T &Value) {
    if (static_cast<size_t>(End - At) < sizeof(T))
      return false;
    std::memcpy(&Value, At, sizeof(T));
    At += sizeof(T);
    return true;
  }
  bool bytes(uint64_t Count, const unsigned char *&Data) {
    if (static_cast<uint64_t>(End - At) < Count)
      return false;
    Data = At;
    At += Count;
    return true;
  }
  bool done() const { return At == End; }

private:
  const unsigned char *At, *End;
};

} // namespace

Status writeCheckpoint(const std::string &Path, const Checkpoint &C) {
  // Record headers go into one string; the data is written from where it
  // lies (the arena), so a checkpoint costs no copy of the state.
  std::vector<std::string> Heads(C.Tensors.size());
  uint64_t PayloadBytes = 0;
  for (size_t I = 0; I < C.Tensors.size(); ++I) {
    const StateTensor &T = C.Tensors[I];
    std::string &Head = Heads[I];
    put(Head, static_cast<uint32_t>(T.Name.size()));
    Head += T.Name;
    put(Head, static_cast<int32_t>(T.Role));
    put(Head, static_cast<int32_t>(T.Dtype));
    put(Head, static_cast<uint32_t>(T.Shape.size()));
    for (int64_t Dim : T.Shape)
      put(Head, Dim);
    put(Head, T.Bytes);
    PayloadBytes += Head.size() + T.Bytes;
  }
  std::string Header(Magic, sizeof(Magic));
  put(Header, Checkpoint::Version);
  put(Header, static_cast<uint32_t>(C.Tensors.size()));
  put(Header, C.Step);
  put(Header, C.DataPosition);
  put(Header, C.Seed);
  put(Header, PayloadBytes);

  std::vector<std::pair<const void *, size_t>> Pieces;
  Pieces.emplace_back(Header.data(), Header.size());
  uint32_t Crc = data::crc32c(Header.data(), Header.size());
  for (size_t I = 0; I < C.Tensors.size(); ++I) {
    Pieces.emplace_back(Heads[I].data(), Heads[I].size());
    Pieces.emplace_back(C.Tensors[I].Data, C.Tensors[I].Bytes);
    Crc = data::crc32cExtend(Crc, Heads[I].data(), Heads[I].size());
    Crc = data::crc32cExtend(Crc, C.Tensors[I].Data, C.Tensors[I].Bytes);
  }
  Pieces.emplace_back(&Crc, sizeof(Crc));

  size_t KillAfter = SIZE_MAX;
  if (const char *Hook = std::getenv("FASTNN_TEST_KILL_IN_CHECKPOINT"))
    if (std::to_string(C.Step) == Hook)
      KillAfter = (Header.size() + PayloadBytes) / 2;
  return writeFileAtomically(Path, Pieces, KillAfter);
}

Status readCheckpoint(const std::string &Path, Checkpoint &Out) {
  Out = Checkpoint();
  std::error_code Ec;
  uint64_t Size = fs::file_size(Path, Ec);
  if (Ec)
    return Status::error(Path +
                         ": cannot read the checkpoint: " + Ec.message());
  std::ifstream In(Path, std::ios::binary);
  Out.Buffer.resize(Size);
  if (!In || !In.read(reinterpret_cast<char *>(Out.Buffer.data()),
                      static_cast<std::streamsize>(Size)))
    return Status::error(Path + ": cannot read the checkpoint");

  const unsigned char *Begin = Out.Buffer.data();
  if (Size < sizeof(Magic) || std::memcmp(Begin, Magic, sizeof(Magic)) != 0)
    return Status::error(Path + ": not a fastnn checkpoint (no FNNCKPT "
                                "header)");
  Cursor Head(Begin + sizeof(Magic), Begin + Size);
  uint32_t Version = 0, Count = 0;
  uint64_t Seed = 0, PayloadBytes = 0;
  int64_t Step = 0, Position = 0;
  if (!Head.get(Version) || !Head.get(Count) || !Head.get(Step) ||
      !Head.get(Position) || !Head.get(Seed) || !Head.get(PayloadBytes))
    return Status::error(Path + ": truncated checkpoint: " +
                         std::to_string(Size) + " bytes, less than its header");
  if (Version != Checkpoint::Version)
    return Status::error(Path + ": checkpoint format version " +
                         std::to_string(Version) +
                         "; this train.bin reads "
                         "version " +
                         std::to_string(Checkpoint::Version));
  uint64_t Expected = HeaderBytes + PayloadBytes + sizeof(uint32_t);
  if (PayloadBytes > Size || Size != Expected)
    return Status::error(
        Path + ": truncated or damaged checkpoint: " + std::to_string(Size) +
        " bytes, its header says " + std::to_string(Expected));
  uint32_t Stored;
  std::memcpy(&Stored, Begin + Size - sizeof(Stored), sizeof(Stored));
  if (data::crc32c(Begin, Size - sizeof(Stored)) != Stored)
    return Status::error(Path + ": corrupt checkpoint: CRC-32C mismatch");

  Out.Step = Step;
  Out.DataPosition = Position;
  Out.Seed = Seed;
  Cursor Payload(Begin + HeaderBytes, Begin + HeaderBytes + PayloadBytes);
  for (uint32_t I = 0; I < Count; ++I) {
    StateTensor T;
    uint32_t NameBytes = 0, Rank = 0;
    int32_t Role = 0, Dtype = 0;
    const unsigned char *Name = nullptr;
    bool Ok = Payload.get(NameBytes) && Payload.bytes(NameBytes, Name) &&
              Payload.get(Role) && Payload.get(Dtype) && Payload.get(Rank) &&
              Rank <= FNN_MAX_RANK;
    for (uint32_t D = 0; Ok && D < Rank; ++D) {
      int64_t Dim = 0;
      Ok = Payload.get(Dim) && Dim >= 0;
      T.Shape.push_back(Dim);
    }
    Ok = Ok && Payload.get(T.Bytes) && Payload.bytes(T.Bytes, T.Data);
    if (!Ok)
      return Status::error(Path + ": corrupt checkpoint: tensor " +
                           std::to_string(I) + " does not fit its payload");
    T.Name.assign(reinterpret_cast<const char *>(Name), NameBytes);
    T.Role = Role;
    T.Dtype = Dtype;
    // The dims come from the file: a product that overflows is as wrong
    // as one that differs from the bytes stored.
    uint64_t ShapeBytes = static_cast<uint64_t>(runtime::dtypeBytes(Dtype));
    bool Overflows = false;
    for (int64_t Dim : T.Shape)
      Overflows |= __builtin_mul_overflow(
          ShapeBytes, static_cast<uint64_t>(Dim), &ShapeBytes);
    if (Overflows || T.Bytes != ShapeBytes)
      return Status::error(Path + ": corrupt checkpoint: tensor '" + T.Name +
                           "' " + shapeText(T.Shape) + " holds " +
                           std::to_string(T.Bytes) + " bytes");
    Out.Tensors.push_back(std::move(T));
  }
  if (!Payload.done())
    return Status::error(Path + ": corrupt checkpoint: bytes after the last "
                                "tensor");
  return Status::success();
}

} // namespace fastnn::trainer
