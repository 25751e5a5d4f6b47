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

/// A rectangle of an image, in pixels.
struct PixelRect {
  int Y = 0, X = 0, Height = 0, Width = 0;
};

/// Decoded 8-bit pixels, interleaved: Height rows of Width x Channels values,
/// row R starting at Data + R * RowStride.
struct PixelView {
  const uint8_t *Data = nullptr;
  int Height = 0, Width = 0, Channels = 0;
  size_t RowStride = 0;
};

/// Decodes JPEG/PNG into interleaved 8-bit pixels (height x width x
/// channels). \p Channels (1 or 3) converts gray<->RGB while decoding.
/// JPEGs go through libjpeg-turbo's libjpeg API with the accurate integer
/// DCT and fancy upsampling (TensorFlow's decode_jpeg with INTEGER_ACCURATE).
/// One decoder per thread: it keeps the libjpeg state alive between images.
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
  /// Decodes the pixels of \p Crop, which must lie inside the image, into
  /// \p Pixels and describes them in \p Out. A JPEG is decoded only as far
  /// as the crop needs, as TensorFlow's decode_and_crop_jpeg does: the rows
  /// above it are skipped (entropy-decoded only), the rows below it are not
  /// read, and only the iMCU columns it covers are transformed, upsampled
  /// and converted. The pixels equal those of a full decode bit for bit.
  /// Damage in the part of the file after the crop's last row goes unseen.
  /// PNGs are decoded whole.
  Status decodeCrop(const void *Data, size_t Size, int Channels,
                    const PixelRect &Crop, std::vector<uint8_t> &Pixels,
                    PixelView &Out);

private:
  struct Jpeg;
  std::unique_ptr<Jpeg> J;
};

/// Lossless PNG (libpng) of 1 or 3 interleaved 8-bit channels.
Status encodePng(const uint8_t *Pixels, int Height, int Width, int Channels,
                 std::string &Out);
/// JPEG (libjpeg-turbo), 4:2:0 for RGB; used by tools, tests and benchmarks.
Status encodeJpeg(const uint8_t *Pixels, int Height, int Width, int Channels,
                  int Quality, std::string &Out);

} // namespace fastnn::data

#endif // FASTNN_DATA_IMAGE_H
