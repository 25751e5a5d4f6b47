//===- Image.cpp - JPEG (libjpeg-turbo) and PNG (libpng) ------------------===//

#include "fastnn/data/Image.h"

#include <cstring>
#include <png.h>
#include <turbojpeg.h>

namespace fastnn::data {

ImageFormat detectImageFormat(const void *Data, size_t Size) {
  const auto *P = static_cast<const unsigned char *>(Data);
  if (Size >= 3 && P[0] == 0xff && P[1] == 0xd8 && P[2] == 0xff)
    return ImageFormat::Jpeg;
  static const unsigned char PngMagic[8] = {0x89, 'P',  'N',  'G',
                                            '\r', '\n', 0x1a, '\n'};
  if (Size >= 8 && std::memcmp(P, PngMagic, 8) == 0)
    return ImageFormat::Png;
  return ImageFormat::Unknown;
}

ImageDecoder::ImageDecoder() : Tj(tjInitDecompress()) {}
ImageDecoder::~ImageDecoder() {
  if (Tj)
    tjDestroy(static_cast<tjhandle>(Tj));
}

namespace {

Status checkSize(int64_t Height, int64_t Width) {
  if (Height <= 0 || Width <= 0)
    return Status::error("image has an empty size");
  if (uint64_t(Height) * uint64_t(Width) > MaxImagePixels)
    return Status::error("image of " + std::to_string(Width) + "x" +
                         std::to_string(Height) + " pixels exceeds the limit");
  return Status::success();
}

Status pngHeader(const void *Data, size_t Size, png_image &Img) {
  std::memset(&Img, 0, sizeof(Img));
  Img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&Img, Data, Size)) {
    std::string Msg = std::string("undecodable PNG: ") + Img.message;
    png_image_free(&Img);
    return Status::error(Msg);
  }
  return Status::success();
}

} // namespace

Status ImageDecoder::readHeader(const void *Data, size_t Size, int &Height,
                                int &Width) {
  switch (detectImageFormat(Data, Size)) {
  case ImageFormat::Jpeg: {
    int Sub = 0, Space = 0;
    if (!Tj)
      return Status::error("cannot initialise libjpeg-turbo");
    if (tjDecompressHeader3(static_cast<tjhandle>(Tj),
                            static_cast<const unsigned char *>(Data),
                            static_cast<unsigned long>(Size), &Width, &Height,
                            &Sub, &Space) != 0)
      return Status::error(std::string("undecodable JPEG: ") +
                           tjGetErrorStr2(static_cast<tjhandle>(Tj)));
    return checkSize(Height, Width);
  }
  case ImageFormat::Png: {
    png_image Img;
    if (Status S = pngHeader(Data, Size, Img); !S.ok())
      return S;
    Height = static_cast<int>(Img.height);
    Width = static_cast<int>(Img.width);
    png_image_free(&Img);
    return checkSize(Img.height, Img.width);
  }
  case ImageFormat::Unknown:
    break;
  }
  return Status::error("image is neither JPEG nor PNG");
}

Status ImageDecoder::decode(const void *Data, size_t Size, int Channels,
                            std::vector<uint8_t> &Pixels, int &Height,
                            int &Width) {
  if (Channels != 1 && Channels != 3)
    return Status::error("can only decode to 1 or 3 channels");
  switch (detectImageFormat(Data, Size)) {
  case ImageFormat::Jpeg: {
    if (Status S = readHeader(Data, Size, Height, Width); !S.ok())
      return S;
    Pixels.resize(size_t(Height) * Width * Channels);
    // Accurate DCT: TensorFlow's decode_jpeg default, and what the bare
    // decode loop of the benchmark uses too.
    if (tjDecompress2(static_cast<tjhandle>(Tj),
                      static_cast<const unsigned char *>(Data),
                      static_cast<unsigned long>(Size), Pixels.data(), Width, 0,
                      Height, Channels == 1 ? TJPF_GRAY : TJPF_RGB, 0) != 0) {
      // libjpeg-turbo reports recoverable damage (e.g. premature end of
      // data) as a warning with the image still produced; TensorFlow's
      // decoder rejects it, and so do we: a half-grey image is not data.
      return Status::error(std::string("undecodable JPEG: ") +
                           tjGetErrorStr2(static_cast<tjhandle>(Tj)));
    }
    return Status::success();
  }
  case ImageFormat::Png: {
    png_image Img;
    if (Status S = pngHeader(Data, Size, Img); !S.ok())
      return S;
    if (Status S = checkSize(Img.height, Img.width); !S.ok()) {
      png_image_free(&Img);
      return S;
    }
    Img.format = Channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    Height = static_cast<int>(Img.height);
    Width = static_cast<int>(Img.width);
    Pixels.resize(PNG_IMAGE_SIZE(Img));
    if (!png_image_finish_read(&Img, nullptr, Pixels.data(), 0, nullptr)) {
      std::string Msg = std::string("undecodable PNG: ") + Img.message;
      png_image_free(&Img);
      return Status::error(Msg);
    }
    return Status::success();
  }
  case ImageFormat::Unknown:
    break;
  }
  return Status::error("image is neither JPEG nor PNG");
}

Status encodePng(const uint8_t *Pixels, int Height, int Width, int Channels,
                 std::string &Out) {
  if (Channels != 1 && Channels != 3)
    return Status::error("PNG encoding supports 1 or 3 channels");
  png_image Img;
  std::memset(&Img, 0, sizeof(Img));
  Img.version = PNG_IMAGE_VERSION;
  Img.width = static_cast<png_uint_32>(Width);
  Img.height = static_cast<png_uint_32>(Height);
  Img.format = Channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t Bytes = 0;
  if (!png_image_write_get_memory_size(Img, Bytes, 0, Pixels, 0, nullptr))
    return Status::error(std::string("PNG encoding failed: ") + Img.message);
  Out.resize(Bytes);
  if (!png_image_write_to_memory(&Img, Out.data(), &Bytes, 0, Pixels, 0,
                                 nullptr))
    return Status::error(std::string("PNG encoding failed: ") + Img.message);
  Out.resize(Bytes);
  return Status::success();
}

Status encodeJpeg(const uint8_t *Pixels, int Height, int Width, int Channels,
                  int Quality, std::string &Out) {
  if (Channels != 1 && Channels != 3)
    return Status::error("JPEG encoding supports 1 or 3 channels");
  tjhandle H = tjInitCompress();
  if (!H)
    return Status::error("cannot initialise libjpeg-turbo");
  unsigned char *Buf = nullptr;
  unsigned long Size = 0;
  int Rc = tjCompress2(H, Pixels, Width, 0, Height,
                       Channels == 1 ? TJPF_GRAY : TJPF_RGB, &Buf, &Size,
                       Channels == 1 ? TJSAMP_GRAY : TJSAMP_420, Quality, 0);
  Status S;
  if (Rc != 0)
    S = Status::error(std::string("JPEG encoding failed: ") +
                      tjGetErrorStr2(H));
  else
    Out.assign(reinterpret_cast<char *>(Buf), Size);
  tjFree(Buf);
  tjDestroy(H);
  return S;
}

} // namespace fastnn::data
