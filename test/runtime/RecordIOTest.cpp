//===- RecordIOTest.cpp - CRC-32C and TFRecord framing --------------------===//

#include "TestUtil.h"

#include "fastnn/data/Crc32c.h"

#include <cstring>

using namespace fastnn::data;
using namespace fastnn::data::test;

TEST(Crc32c, KnownVectors) {
  // The CRC-32C check value and RFC 3720 (iSCSI) B.4 vectors.
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  std::vector<uint8_t> Zeros(32, 0), Ones(32, 0xff), Inc(32), Dec(32);
  for (int I = 0; I < 32; ++I)
    Inc[I] = static_cast<uint8_t>(I), Dec[I] = static_cast<uint8_t>(31 - I);
  EXPECT_EQ(crc32c(Zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(Ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(Inc.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c(Dec.data(), 32), 0x113fdb5cu);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string S = "hello world, this string is longer than a word";
  for (size_t Cut = 0; Cut <= S.size(); ++Cut)
    EXPECT_EQ(
        crc32cExtend(crc32c(S.data(), Cut), S.data() + Cut, S.size() - Cut),
        crc32c(S.data(), S.size()));
}

TEST(Crc32c, Mask) {
  // TensorFlow's crc32c_test: Mask changes the value, Unmask inverts it.
  uint32_t C = crc32c("foo", 3);
  EXPECT_NE(maskCrc(C), C);
  EXPECT_NE(maskCrc(maskCrc(C)), C);
  EXPECT_EQ(unmaskCrc(maskCrc(C)), C);
  EXPECT_EQ(unmaskCrc(unmaskCrc(maskCrc(maskCrc(C)))), C);
  // Masked CRC of the empty string and of "abc", by the formula.
  EXPECT_EQ(maskCrc(0), 0xa282ead8u);
  EXPECT_EQ(maskCrc(crc32c("abc", 3)),
            ((0x364b3fb7u >> 15) | (0x364b3fb7u << 17)) + 0xa282ead8u);
}

TEST(RecordIO, FramingBytes) {
  std::string Out;
  appendFramedRecord(Out, "abc");
  ASSERT_EQ(Out.size(), 12u + 3 + 4);
  const unsigned char Len[8] = {3, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(0, std::memcmp(Out.data(), Len, 8));
  uint32_t LenCrc, DataCrc;
  std::memcpy(&LenCrc, Out.data() + 8, 4);
  std::memcpy(&DataCrc, Out.data() + 15, 4);
  EXPECT_EQ(LenCrc, maskCrc(crc32c(Len, 8)));
  EXPECT_EQ(DataCrc, maskCrc(crc32c("abc", 3)));
  EXPECT_EQ(Out.substr(12, 3), "abc");
}

class RecordRoundTrip : public ::testing::TestWithParam<Compression> {};

TEST_P(RecordRoundTrip, WritesAndReadsBack) {
  TempDir D;
  std::vector<std::string> Recs = {"", "a", std::string(100000, 'x'),
                                   std::string("\0\1\2", 3)};
  for (int I = 0; I < 1000; ++I)
    Recs.push_back("record " + std::to_string(I));
  std::string Path = D.file("r.tfrecord");
  writeRecords(Path, Recs, GetParam());
  std::vector<std::string> Back;
  Status S = readAll(Path, Back, GetParam());
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Back, Recs);
  Compression Detected;
  ASSERT_TRUE(detectCompression(Path, Detected).ok());
  EXPECT_EQ(Detected, GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, RecordRoundTrip,
                         ::testing::Values(Compression::None, Compression::Gzip,
                                           Compression::Zlib),
                         [](const auto &Info) {
                           return std::string(compressionName(Info.param));
                         });

TEST_P(RecordRoundTrip, FlushMakesWholeRecordsReadable) {
  TempDir D;
  std::string Path = D.file("growing.tfrecord");
  Status S;
  auto Writer = RecordWriter::open(Path, GetParam(), S);
  ASSERT_TRUE(Writer) << S.message();
  ASSERT_TRUE(Writer->write("first").ok());
  ASSERT_TRUE(Writer->write("second").ok());
  ASSERT_TRUE(Writer->flush().ok());
  // The writer is still open: a reader sees both records, then an end
  // (a compressed stream that is not finished yet reads as truncated).
  auto Reader = RecordReader::open(Path, {GetParam()}, S);
  ASSERT_TRUE(Reader) << S.message();
  std::string Record;
  ASSERT_EQ(Reader->next(Record, S), RecordReader::Result::Record);
  EXPECT_EQ(Record, "first");
  ASSERT_EQ(Reader->next(Record, S), RecordReader::Result::Record);
  EXPECT_EQ(Record, "second");
  ASSERT_TRUE(Writer->close().ok());
}

TEST(RecordIO, GzipFileIsGzip) {
  TempDir D;
  writeRecords(D.file("g"), {"hello"}, Compression::Gzip);
  std::string B = readFile(D.file("g"));
  ASSERT_GE(B.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(B[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(B[1]), 0x8b);
}

TEST(RecordIO, CompressionNames) {
  Compression C;
  EXPECT_TRUE(parseCompression("GZIP", C).ok());
  EXPECT_EQ(C, Compression::Gzip);
  EXPECT_TRUE(parseCompression("", C).ok());
  EXPECT_EQ(C, Compression::None);
  Status S = parseCompression("lz4", C);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("lz4"), std::string::npos);
}

TEST(RecordIO, MissingFileNamesIt) {
  Status S;
  auto R = RecordReader::open("/nonexistent/x.tfrecord", {}, S);
  EXPECT_FALSE(R);
  EXPECT_NE(S.message().find("/nonexistent/x.tfrecord"), std::string::npos);
}
