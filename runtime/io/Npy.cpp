//===- Npy.cpp - numpy .npy reader and writer -----------------------------===//
//
// Format (numpy/lib/format.py): "\x93NUMPY", major, minor, a little-endian
// header length (uint16 in 1.0, uint32 in 2.0 and 3.0), then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so that the data starts 64-aligned.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/npy.h"

#include "fastnn/runtime/ShapeText.h"

#include <cstring>
#include <fstream>
#include <limits>

using namespace fastnn::runtime;

namespace {

constexpr unsigned char Magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
/// numpy itself refuses headers over 10000 bytes by default; this bound only
/// keeps a corrupt length from turning into a huge allocation.
constexpr uint64_t MaxHeaderBytes = uint64_t(1) << 20;

struct TypeInfo {
  NpyType Type;
  const char *Descr;
  size_t Size;
};
constexpr TypeInfo Types[] = {
    {NpyType::F32, "<f4", 4}, {NpyType::F64, "<f8", 8},
    {NpyType::F16, "<f2", 2}, {NpyType::I64, "<i8", 8},
    {NpyType::I32, "<i4", 4}, {NpyType::I16, "<i2", 2},
    {NpyType::I8, "|i1", 1},  {NpyType::U8, "|u1", 1},
    {NpyType::U16, "<u2", 2}, {NpyType::Bool, "|b1", 1}};

const TypeInfo &info(NpyType Type) {
  for (const TypeInfo &T : Types)
    if (T.Type == Type)
      return T;
  return Types[0];
}

Status failure(const std::string &Name, uint64_t Offset,
               const std::string &What) {
  return Status::error(Name + ": byte " + std::to_string(Offset) + ": " + What);
}

struct Header {
  NpyType Type = NpyType::F32;
  std::vector<int64_t> Shape;
  uint64_t DataOffset = 0;
  uint64_t DataBytes = 0;
};

/// A recursive-descent reader of the header's dict literal; positions are
/// reported as file offsets.
class DictParser {
public:
  DictParser(const std::string &Name, const char *Text, size_t Size,
             uint64_t Base)
      : Name(Name), Text(Text), Size(Size), Base(Base) {}

  Status parse(Header &H) {
    bool HaveDescr = false, HaveOrder = false, HaveShape = false;
    skipSpace();
    if (!consume('{'))
      return error("header does not start with '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      uint64_t KeyAt = Pos;
      std::string Key;
      if (Status S = parseString(Key); !S.ok())
        return S;
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after key '" + Key + "'");
      skipSpace();
      uint64_t ValueAt = Pos;
      if (Key == "descr" && !HaveDescr) {
        std::string Descr;
        if (Status S = parseString(Descr); !S.ok())
          return S;
        bool Known = false;
        for (const TypeInfo &T : Types)
          if (Descr == T.Descr) {
            H.Type = T.Type;
            Known = true;
          }
        if (!Known)
          return errorAt(ValueAt, "unsupported dtype '" + Descr +
                                      "' (supported: <f4 <f8 <i8 <i4 |u1 "
                                      "|b1)");
        HaveDescr = true;
      } else if (Key == "fortran_order" && !HaveOrder) {
        if (consumeWord("True"))
          return errorAt(ValueAt, "fortran_order True is not supported; "
                                  "save a C-ordered array "
                                  "(numpy.ascontiguousarray)");
        if (!consumeWord("False"))
          return errorAt(ValueAt, "fortran_order is not True or False");
        HaveOrder = true;
      } else if (Key == "shape" && !HaveShape) {
        if (Status S = parseShape(H.Shape); !S.ok())
          return S;
        HaveShape = true;
      } else {
        return errorAt(KeyAt, "unexpected or repeated key '" + Key + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return error("expected ',' or '}'");
    }
    skipSpace();
    if (Pos != Size)
      return error("unexpected text after the header dict");
    if (!HaveDescr || !HaveOrder || !HaveShape)
      return error("header lacks one of 'descr', 'fortran_order', 'shape'");
    return Status::success();
  }

private:
  Status error(const std::string &What) const { return errorAt(Pos, What); }
  Status errorAt(size_t At, const std::string &What) const {
    return failure(Name, Base + At, What);
  }
  void skipSpace() {
    while (Pos < Size && (Text[Pos] == ' ' || Text[Pos] == '\n' ||
                          Text[Pos] == '\t' || Text[Pos] == '\r'))
      ++Pos;
  }
  bool consume(char C) {
    if (Pos < Size && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  bool consumeWord(const char *Word) {
    size_t Len = std::strlen(Word);
    if (Size - Pos >= Len && std::memcmp(Text + Pos, Word, Len) == 0) {
      Pos += Len;
      return true;
    }
    return false;
  }
  Status parseString(std::string &Out) {
    if (Pos >= Size || (Text[Pos] != '\'' && Text[Pos] != '"'))
      return error("expected a quoted string");
    char Quote = Text[Pos++];
    size_t Start = Pos;
    while (Pos < Size && Text[Pos] != Quote)
      ++Pos;
    if (Pos >= Size)
      return errorAt(Start - 1, "unterminated string");
    Out.assign(Text + Start, Pos - Start);
    ++Pos;
    return Status::success();
  }
  Status parseShape(std::vector<int64_t> &Shape) {
    if (!consume('('))
      return error("expected '(' starting the shape");
    while (true) {
      skipSpace();
      if (consume(')'))
        return Status::success();
      if (Pos >= Size || Text[Pos] < '0' || Text[Pos] > '9')
        return error("expected a dimension or ')'");
      uint64_t Value = 0;
      while (Pos < Size && Text[Pos] >= '0' && Text[Pos] <= '9') {
        Value = Value * 10 + (Text[Pos++] - '0');
        if (Value > (uint64_t(1) << 62))
          return error("dimension is too large");
      }
      if (Shape.size() >= 64)
        return error("more than 64 dimensions");
      Shape.push_back(static_cast<int64_t>(Value));
      skipSpace();
      if (consume(')'))
        return Status::success();
      if (!consume(','))
        return error("expected ',' or ')' in the shape");
    }
  }

  const std::string &Name;
  const char *Text;
  size_t Size;
  uint64_t Base;
  size_t Pos = 0;
};

/// Parses the preamble and header from the first \p Avail bytes of a file
/// of \p FileSize bytes, and checks that the data fills the rest exactly.
Status parseHeader(const std::string &Name, const unsigned char *Bytes,
                   size_t Avail, uint64_t FileSize, Header &H) {
  if (Avail < 8 || std::memcmp(Bytes, Magic, sizeof(Magic)) != 0)
    return failure(Name, 0, "not a .npy file (no \\x93NUMPY magic)");
  unsigned Major = Bytes[6], Minor = Bytes[7];
  if (Major < 1 || Major > 3 || Minor != 0)
    return failure(Name, 6,
                   "unsupported format version " + std::to_string(Major) + "." +
                       std::to_string(Minor) + " (1.0 to 3.0)");
  size_t LenBytes = Major == 1 ? 2 : 4;
  if (Avail < 8 + LenBytes)
    return failure(Name, 8, "file ends inside the header length");
  uint64_t HeaderLen = 0;
  for (size_t I = 0; I < LenBytes; ++I)
    HeaderLen |= uint64_t(Bytes[8 + I]) << (8 * I);
  uint64_t HeaderStart = 8 + LenBytes;
  if (HeaderLen > MaxHeaderBytes)
    return failure(Name, 8,
                   "header length " + std::to_string(HeaderLen) +
                       " exceeds the 1 MiB limit");
  if (HeaderStart + HeaderLen > Avail)
    return failure(Name, 8,
                   "header length " + std::to_string(HeaderLen) +
                       " runs past the end of the file");
  DictParser Parser(Name, reinterpret_cast<const char *>(Bytes) + HeaderStart,
                    HeaderLen, HeaderStart);
  if (Status S = Parser.parse(H); !S.ok())
    return S;
  H.DataOffset = HeaderStart + HeaderLen;
  uint64_t Available = FileSize - H.DataOffset;
  // Nothing is allocated before the size is checked against the file's.
  uint64_t Bytes64 = info(H.Type).Size;
  for (int64_t Dim : H.Shape)
    if (__builtin_mul_overflow(Bytes64, static_cast<uint64_t>(Dim), &Bytes64))
      return failure(Name, H.DataOffset,
                     "the header's shape " + numpyShapeText(H.Shape) +
                         " is too large");
  if (Bytes64 != Available)
    return failure(Name, H.DataOffset,
                   "expected " + std::to_string(Bytes64) +
                       " bytes of data for the header's shape " +
                       numpyShapeText(H.Shape) + ", found " +
                       std::to_string(Available));
  H.DataBytes = Bytes64;
  return Status::success();
}

void fill(NpyArray &Out, Header &H) {
  Out.Type = H.Type;
  Out.Shape = std::move(H.Shape);
}

} // namespace

size_t fastnn::runtime::npyTypeSize(NpyType Type) { return info(Type).Size; }

const char *fastnn::runtime::npyTypeDescr(NpyType Type) {
  return info(Type).Descr;
}

int64_t NpyArray::numElements() const {
  int64_t N = 1;
  for (int64_t Dim : Shape)
    N *= Dim;
  return N;
}

Status fastnn::runtime::parseNpy(const std::string &Name, const void *Data,
                                 size_t Size, NpyArray &Out) {
  const auto *Bytes = static_cast<const unsigned char *>(Data);
  Header H;
  if (Status S = parseHeader(Name, Bytes, Size, Size, H); !S.ok())
    return S;
  Out.Data.assign(Bytes + H.DataOffset, Bytes + Size);
  fill(Out, H);
  return Status::success();
}

Status fastnn::runtime::readNpy(const std::string &Path, NpyArray &Out) {
  std::ifstream In(Path, std::ios::binary | std::ios::ate);
  if (!In)
    return Status::error(Path +
                         ": cannot open for reading: " + std::strerror(errno));
  auto End = In.tellg();
  if (End < 0)
    return Status::error(Path + ": cannot determine the file size");
  uint64_t FileSize = static_cast<uint64_t>(End);
  // Enough for the longest header we accept; bounded, unlike the length
  // field.
  std::vector<unsigned char> Prefix(
      static_cast<size_t>(std::min<uint64_t>(FileSize, 12 + MaxHeaderBytes)));
  In.seekg(0);
  if (!In.read(reinterpret_cast<char *>(Prefix.data()), Prefix.size()))
    return failure(Path, 0, "read error");
  Header H;
  if (Status S = parseHeader(Path, Prefix.data(), Prefix.size(), FileSize, H);
      !S.ok())
    return S;
  Out.Data.resize(H.DataBytes);
  In.seekg(static_cast<std::streamoff>(H.DataOffset));
  if (H.DataBytes &&
      !In.read(reinterpret_cast<char *>(Out.Data.data()), H.DataBytes))
    return failure(Path, H.DataOffset, "read error in the data");
  fill(Out, H);
  return Status::success();
}

Status fastnn::runtime::writeNpy(const std::string &Path, NpyType Type,
                                 const std::vector<int64_t> &Shape,
                                 const void *Data) {
  std::string Dict = std::string("{'descr': '") + info(Type).Descr +
                     "', 'fortran_order': False, 'shape': (";
  uint64_t Bytes = info(Type).Size;
  for (size_t I = 0; I < Shape.size(); ++I) {
    if (Shape[I] < 0)
      return Status::error(Path + ": cannot write a negative dimension");
    Dict += std::to_string(Shape[I]) + (Shape.size() == 1 ? "," : "");
    if (I + 1 < Shape.size())
      Dict += ", ";
    Bytes *= static_cast<uint64_t>(Shape[I]);
  }
  Dict += "), }";
  // Version 2.0 only when the header outgrows 1.0's 16-bit length.
  size_t Preamble = Dict.size() + 1 + 10 > 65535 ? 12 : 10;
  size_t Padded = (Preamble + Dict.size() + 1 + 63) / 64 * 64;
  Dict.append(Padded - Preamble - Dict.size() - 1, ' ');
  Dict += '\n';
  std::string Head(reinterpret_cast<const char *>(Magic), sizeof(Magic));
  Head += static_cast<char>(Preamble == 10 ? 1 : 2);
  Head += '\0';
  for (size_t I = 0; I < Preamble - 8; ++I)
    Head += static_cast<char>((Dict.size() >> (8 * I)) & 0xff);
  std::ofstream OutFile(Path, std::ios::binary | std::ios::trunc);
  if (!OutFile)
    return Status::error(Path +
                         ": cannot open for writing: " + std::strerror(errno));
  OutFile.write(Head.data(), Head.size());
  OutFile.write(Dict.data(), Dict.size());
  if (Bytes)
    OutFile.write(static_cast<const char *>(Data),
                  static_cast<std::streamsize>(Bytes));
  OutFile.close();
  if (!OutFile)
    return Status::error(Path + ": write error");
  return Status::success();
}
