//===- Image.h - JPEG/PNG decoding and encoding -----------------*- C++ -*-===//

#ifndef FASTNN_DATA_IMAGE_H
#define FASTNN_DATA_IMAGE_H

#include "fastnn/data/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastnn::data {

enum class ImageFormat { Unknown, Jpeg, Png };

/// Looks at the magic bytes; the image/format feature is only a hint.
ImageFormat detectImageFormat(const void *Data, size_t Size);

/// Images with more pixels than this are refused before any allocation, so a
/// forged header cannot make us allocate gigabytes.
constexpr uint64_t MaxImagePixels = uint64_t(1) << 28;

/// Decodes JPEG/PNG into interleaved 8-bit pixels (height x width x
/// channels). \p Channels (1 or 3) converts gray<->RGB while decoding.
/// One decoder per thread: it keeps the libjpeg-turbo handle alive.
class ImageDecoder {
public:
  ImageDecoder();
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder &) = delete;
  ImageDecoder &operator=(const ImageDecoder &) = delete;

  /// Reads the size without decoding.
  Status readHeader(const void *Data, size_t Size, int &Height, int &Width);
  /// Decodes into \p Pixels (resized as needed, capacity kept between calls).
  Status decode(const void *Data, size_t Size, int Channels,
                std::vector<uint8_t> &Pixels, int &Height, int &Width);

private:
  void *Tj; // tjhandle
};

/// Lossless PNG (libpng) of 1 or 3 interleaved 8-bit channels.
Status encodePng(const uint8_t *Pixels, int Height, int Width, int Channels,
                 std::string &Out);
/// JPEG (libjpeg-turbo), 4:2:0 for RGB; used by tools, tests and benchmarks.
Status encodeJpeg(const uint8_t *Pixels, int Height, int Width, int Channels,
                  int Quality, std::string &Out);

} // namespace fastnn::data

#endif // FASTNN_DATA_IMAGE_H
