//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "fastnn/runtime/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace fastnn::runtime;

namespace {

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
    Dir = std::filesystem::temp_directory_path() /
          ("fastnn-npy-" + std::string(Info->name()) + "-" +
           std::to_string(::getpid()));
    std::filesystem::create_directories(Dir);
  }
  void TearDown() override { std::filesystem::remove_all(Dir); }
  std::string file(const std::string &Name) const {
    return (Dir / Name).string();
  }
  std::string writeBytes(const std::string &Name, const std::string &Bytes) {
    std::string Path = file(Name);
    std::ofstream(Path, std::ios::binary) << Bytes;
    return Path;
  }
  std::filesystem::path Dir;
};

/// A version 1.0 file with the given header dict, padded as numpy pads it.
std::string npyBytes(const std::string &Dict, const std::string &Data,
                     int Major = 1) {
  size_t Preamble = Major == 1 ? 10 : 12;
  std::string Header = Dict;
  while ((Preamble + Header.size() + 1) % 64)
    Header += ' ';
  Header += '\n';
  std::string Out = "\x93NUMPY";
  Out += static_cast<char>(Major);
  Out += '\0';
  for (size_t I = 0; I < Preamble - 8; ++I)
    Out += static_cast<char>((Header.size() >> (8 * I)) & 0xff);
  return Out + Header + Data;
}

std::string errorOf(const std::string &Path) {
  NpyArray A;
  Status S = readNpy(Path, A);
  EXPECT_FALSE(S.ok());
  EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
  EXPECT_EQ(S.message().rfind(Path, 0), 0u) << S.message();
  return S.message();
}

TEST_F(NpyTest, RoundTripsEveryType) {
  for (NpyType T :
       {NpyType::F32, NpyType::F64, NpyType::F16, NpyType::I64, NpyType::I32,
        NpyType::I16, NpyType::I8, NpyType::U8, NpyType::U16, NpyType::Bool}) {
    std::vector<int64_t> Shape = {2, 3, 4};
    std::vector<unsigned char> Data(24 * npyTypeSize(T));
    for (size_t I = 0; I < Data.size(); ++I)
      Data[I] = T == NpyType::Bool ? I % 2 : static_cast<unsigned char>(I * 31);
    std::string Path = file(std::string("a") + npyTypeDescr(T)[2] + ".npy");
    ASSERT_TRUE(writeNpy(Path, T, Shape, Data.data()).ok());
    EXPECT_EQ(std::filesystem::file_size(Path) % 64, Data.size() % 64);
    NpyArray A;
    Status S = readNpy(Path, A);
    ASSERT_TRUE(S.ok()) << S.message();
    EXPECT_EQ(A.Type, T);
    EXPECT_EQ(A.Shape, Shape);
    EXPECT_EQ(A.Data, Data);
  }
}

TEST_F(NpyTest, RoundTripsScalarOneDimAndEmpty) {
  for (std::vector<int64_t> Shape : std::vector<std::vector<int64_t>>{
           {}, {5}, {0, 3}, {1, 1, 1, 1, 1, 1, 2}}) {
    NpyArray A;
    A.Type = NpyType::F32;
    A.Shape = Shape;
    A.Data.resize(A.numElements() * 4, 0x3f);
    std::string Path = file("s.npy");
    ASSERT_TRUE(writeNpy(Path, A).ok());
    NpyArray B;
    Status S = readNpy(Path, B);
    ASSERT_TRUE(S.ok()) << S.message();
    EXPECT_EQ(B.Shape, Shape);
    EXPECT_EQ(B.Data, A.Data);
  }
}

TEST_F(NpyTest, WritesNumpysHeader) {
  float X[3] = {1, 2, 3};
  std::string Path = file("h.npy");
  ASSERT_TRUE(writeNpy(Path, NpyType::F32, {3}, X).ok());
  std::ifstream In(Path, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)), {});
  EXPECT_EQ(Bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(Bytes.find("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (3,), }"),
            std::string::npos);
  // As numpy: the data starts at a multiple of 64.
  EXPECT_EQ(Bytes.size(), 128u + 12u);
  EXPECT_EQ(Bytes[127], '\n');
}

TEST_F(NpyTest, ReadsVersions2And3AndOtherKeyOrders) {
  std::string Data(8, '\0');
  for (int Major : {2, 3}) {
    NpyArray A;
    Status S = readNpy(
        writeBytes("v.npy", npyBytes("{\"shape\": (2,), \"fortran_order\": "
                                     "False, \"descr\": \"<i4\"}",
                                     Data, Major)),
        A);
    ASSERT_TRUE(S.ok()) << S.message();
    EXPECT_EQ(A.Type, NpyType::I32);
    EXPECT_EQ(A.Shape, std::vector<int64_t>{2});
  }
}

TEST_F(NpyTest, ParsesFromMemory) {
  std::string Bytes = npyBytes(
      "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", "abcd");
  NpyArray A;
  Status S = parseNpy("mem", Bytes.data(), Bytes.size(), A);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(std::string(A.Data.begin(), A.Data.end()), "abcd");
}

TEST_F(NpyTest, CorruptHeadersGiveOneLineErrors) {
  const std::string Good =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string Data(8, '\0');
  struct Case {
    std::string Name, Bytes, Expected;
  } Cases[] = {
      {"empty", "", "byte 0: not a .npy file"},
      {"magic", "PK\x03\x04 not numpy at all", "byte 0: not a .npy file"},
      {"version", std::string("\x93NUMPY\x07\x00", 8) + "xx",
       "byte 6: unsupported format version 7.0"},
      {"shortlen", std::string("\x93NUMPY\x01\x00", 8),
       "byte 8: file ends inside the header length"},
      {"longheader", std::string("\x93NUMPY\x01\x00\xff\x7f", 10) + "{}",
       "byte 8: header length 32767 runs past the end of the file"},
      {"hugeheader", std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12),
       "byte 8: header length 4294967295 exceeds the 1 MiB limit"},
      {"dtype",
       npyBytes("{'descr': '>f4', 'fortran_order': False, "
                "'shape': (2,), }",
                Data),
       "byte 20: unsupported dtype '>f4'"},
      {"fortran",
       npyBytes("{'descr': '<f4', 'fortran_order': True, "
                "'shape': (2,), }",
                Data),
       "fortran_order True is not supported"},
      {"hugeshape",
       npyBytes("{'descr': '<f4', 'fortran_order': False, "
                "'shape': (4294967296, 4294967296, 4294967296), }",
                Data),
       "byte 128: the header's shape (4294967296, 4294967296, 4294967296) "
       "is too large"},
      {"truncated", npyBytes(Good, Data.substr(0, 5)),
       "expected 8 bytes of data for the header's shape (2,), found 5"},
      {"trailing", npyBytes(Good, Data + "x"),
       "expected 8 bytes of data for the header's shape (2,), found 9"},
      {"missingkey", npyBytes("{'descr': '<f4', 'shape': (2,)}", Data),
       "header lacks one of"},
      {"repeatedkey",
       npyBytes("{'descr': '<f4', 'descr': '<f4', 'shape': (2,)}", Data),
       "byte 27: unexpected or repeated key 'descr'"},
      {"badshape",
       npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}",
                Data),
       "expected a dimension or ')'"},
      {"notadict", npyBytes("[1, 2]", Data), "header does not start with"},
      {"unterminated", npyBytes("{'descr: <f4", Data), "unterminated string"},
  };
  for (const Case &C : Cases) {
    std::string Error = errorOf(writeBytes(C.Name + ".npy", C.Bytes));
    EXPECT_NE(Error.find(C.Expected), std::string::npos)
        << C.Name << ": " << Error;
  }
}

TEST_F(NpyTest, MissingFileNamesThePath) {
  std::string Error = errorOf(file("absent.npy"));
  EXPECT_NE(Error.find("cannot open"), std::string::npos) << Error;
}

} // namespace
