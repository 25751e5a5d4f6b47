//===- ImageTest.cpp - JPEG/PNG decoding ----------------------------------===//

#include "TestUtil.h"

#include <cstdlib>
#include <zlib.h>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {
double meanDiff(const std::vector<uint8_t> &A, const std::vector<uint8_t> &B) {
  double Sum = 0;
  for (size_t I = 0; I < A.size(); ++I)
    Sum += std::abs(int(A[I]) - int(B[I]));
  return Sum / A.size();
}
} // namespace

TEST(Image, PngGrayAndRgbAreLossless) {
  ImageDecoder Dec;
  for (int C : {1, 3}) {
    std::vector<uint8_t> Src = testPixels(13, 17, C), Px;
    std::string Png;
    ASSERT_TRUE(encodePng(Src.data(), 13, 17, C, Png).ok());
    EXPECT_EQ(detectImageFormat(Png.data(), Png.size()), ImageFormat::Png);
    int H = 0, W = 0;
    ASSERT_TRUE(Dec.decode(Png.data(), Png.size(), C, Px, H, W).ok());
    EXPECT_EQ(H, 13);
    EXPECT_EQ(W, 17);
    EXPECT_EQ(Px, Src);
  }
}

TEST(Image, JpegGrayAndRgb) {
  ImageDecoder Dec;
  for (int C : {1, 3}) {
    std::vector<uint8_t> Src = testPixels(32, 48, C), Px;
    std::string Jpeg;
    ASSERT_TRUE(encodeJpeg(Src.data(), 32, 48, C, 95, Jpeg).ok());
    EXPECT_EQ(detectImageFormat(Jpeg.data(), Jpeg.size()), ImageFormat::Jpeg);
    int H = 0, W = 0;
    ASSERT_TRUE(Dec.readHeader(Jpeg.data(), Jpeg.size(), H, W).ok());
    EXPECT_EQ(H, 32);
    EXPECT_EQ(W, 48);
    ASSERT_TRUE(Dec.decode(Jpeg.data(), Jpeg.size(), C, Px, H, W).ok());
    ASSERT_EQ(Px.size(), Src.size());
    EXPECT_LE(meanDiff(Px, Src), 6.0); // Lossy, but close.
  }
}

TEST(Image, ChannelConversionWhileDecoding) {
  ImageDecoder Dec;
  std::vector<uint8_t> Gray = testPixels(8, 8, 1), Px;
  std::string Png;
  ASSERT_TRUE(encodePng(Gray.data(), 8, 8, 1, Png).ok());
  int H, W;
  ASSERT_TRUE(Dec.decode(Png.data(), Png.size(), 3, Px, H, W).ok());
  ASSERT_EQ(Px.size(), 8u * 8 * 3);
  for (size_t I = 0; I < Gray.size(); ++I) {
    EXPECT_EQ(Px[I * 3], Gray[I]);
    EXPECT_EQ(Px[I * 3 + 2], Gray[I]);
  }
  std::vector<uint8_t> Rgb = testPixels(8, 8, 3);
  std::string Jpeg;
  ASSERT_TRUE(encodeJpeg(Rgb.data(), 8, 8, 3, 90, Jpeg).ok());
  ASSERT_TRUE(Dec.decode(Jpeg.data(), Jpeg.size(), 1, Px, H, W).ok());
  EXPECT_EQ(Px.size(), 64u);
}

TEST(Image, HugeHeaderIsRefused) {
  // A PNG header claiming 100000 x 100000 pixels must not be allocated.
  std::vector<uint8_t> One = {0};
  std::string Png;
  ASSERT_TRUE(encodePng(One.data(), 1, 1, 1, Png).ok());
  // IHDR width/height live at bytes 16..23; fix up the chunk CRC too.
  auto put32 = [&](size_t At, uint32_t V) {
    for (int I = 0; I < 4; ++I)
      Png[At + I] = static_cast<char>(V >> (24 - 8 * I));
  };
  put32(16, 100000);
  put32(20, 100000);
  uint32_t Crc = crc32(0, reinterpret_cast<const Bytef *>(Png.data() + 12), 17);
  put32(29, Crc);
  ImageDecoder Dec;
  std::vector<uint8_t> Px;
  int H, W;
  Status S = Dec.decode(Png.data(), Png.size(), 1, Px, H, W);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("exceeds the limit"), std::string::npos)
      << S.message();
  EXPECT_LT(Px.capacity(), 1u << 20);
}

TEST(Image, JpegCropEqualsFullDecode) {
  // 4:2:0 RGB and gray JPEGs decoded to 3 and 1 channels: every crop, at
  // the image edges, on iMCU boundaries (multiples of 16) and one pixel off
  // them, holds the pixels of a full decode bit for bit.
  const int H = 61, W = 83;
  ImageDecoder Dec;
  for (int SrcC : {3, 1}) {
    std::vector<uint8_t> Src = photoPixels(H, W, SrcC);
    std::string Jpeg;
    ASSERT_TRUE(encodeJpeg(Src.data(), H, W, SrcC, 90, Jpeg).ok());
    for (int C : {3, 1}) {
      std::vector<uint8_t> Full, Px;
      int FH, FW;
      ASSERT_TRUE(Dec.decode(Jpeg.data(), Jpeg.size(), C, Full, FH, FW).ok());
      for (int Y : {0, 1, 15, 16, 17, 44})
        for (int X : {0, 1, 15, 16, 17, 47})
          for (int CH : {1, 16, H - Y})
            for (int CW : {1, 2, 17, W - X}) {
              PixelView V;
              Status S = Dec.decodeCrop(Jpeg.data(), Jpeg.size(), C,
                                        {Y, X, CH, CW}, Px, V);
              ASSERT_TRUE(S.ok()) << S.message();
              ASSERT_EQ(V.Height, CH);
              ASSERT_EQ(V.Width, CW);
              ASSERT_EQ(V.Channels, C);
              int Diff = 0;
              for (int R = 0; R < CH; ++R)
                for (int I = 0; I < CW * C; ++I)
                  Diff += V.Data[R * V.RowStride + I] !=
                          Full[(size_t(Y + R) * W + X) * C + I];
              ASSERT_EQ(Diff, 0)
                  << "crop " << CW << "x" << CH << " at (" << X << ", " << Y
                  << "), " << SrcC << " -> " << C << " channels";
            }
    }
  }
}

TEST(Image, CropOutsideTheImageIsRefused) {
  std::vector<uint8_t> Src = testPixels(20, 30, 3), Px;
  std::string Jpeg, Png;
  ASSERT_TRUE(encodeJpeg(Src.data(), 20, 30, 3, 90, Jpeg).ok());
  ASSERT_TRUE(encodePng(Src.data(), 20, 30, 3, Png).ok());
  ImageDecoder Dec;
  for (const std::string *Img : {&Jpeg, &Png}) {
    for (PixelRect R : {PixelRect{0, 0, 21, 30}, PixelRect{5, 1, 15, 30},
                        PixelRect{-1, 0, 5, 5}, PixelRect{0, 0, 0, 5}}) {
      PixelView V;
      Status S = Dec.decodeCrop(Img->data(), Img->size(), 3, R, Px, V);
      EXPECT_FALSE(S.ok());
      EXPECT_NE(S.message().find("outside the 30x20 image"), std::string::npos)
          << S.message();
    }
    // The decoder is still usable afterwards.
    PixelView V;
    ASSERT_TRUE(
        Dec.decodeCrop(Img->data(), Img->size(), 3, {2, 3, 4, 5}, Px, V).ok());
    EXPECT_EQ(V.Width, 5);
  }
  // PNG crops point into the whole decoded image.
  PixelView V;
  ASSERT_TRUE(
      Dec.decodeCrop(Png.data(), Png.size(), 3, {2, 3, 4, 5}, Px, V).ok());
  EXPECT_EQ(V.RowStride, 30u * 3);
  EXPECT_EQ(V.Data[0], Src[(2 * 30 + 3) * 3]);
}
