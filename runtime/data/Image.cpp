//===- Image.cpp - JPEG (libjpeg-turbo) and PNG (libpng) ------------------===//
//
// Decoding uses libjpeg-turbo's libjpeg API, which can decode part of an
// image (jpeg_crop_scanline, jpeg_skip_scanlines); encoding, for tools and
// tests, its TurboJPEG API.
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/Image.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio> // jpeglib.h needs FILE and size_t declared first.
#include <cstring>
#include <jpeglib.h>
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

namespace {

/// libjpeg reports errors through error_exit, which by default prints and
/// calls exit(). Ours formats the message and jumps back to the setjmp of
/// the call in progress. Warnings (level < 0) do the same: libjpeg-turbo
/// reports recoverable damage (premature end of data, corrupt entropy
/// data) as warnings and goes on with grey pixels; TensorFlow's decoder
/// rejects a premature end, and a half-grey image is not data.
struct JpegErrors {
  jpeg_error_mgr Mgr;
  std::jmp_buf Jump;
  char Message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpegFail(j_common_ptr Info) {
  auto *E = reinterpret_cast<JpegErrors *>(Info->err);
  E->Mgr.format_message(Info, E->Message);
  std::longjmp(E->Jump, 1);
}

void jpegMessage(j_common_ptr Info, int Level) {
  if (Level < 0)
    jpegFail(Info);
}

Status checkSize(int64_t Height, int64_t Width) {
  if (Height <= 0 || Width <= 0)
    return Status::error("image has an empty size");
  if (uint64_t(Height) * uint64_t(Width) > MaxImagePixels)
    return Status::error("image of " + std::to_string(Width) + "x" +
                         std::to_string(Height) + " pixels exceeds the limit");
  return Status::success();
}

Status checkCrop(const PixelRect &C, int Height, int Width) {
  if (C.Height > 0 && C.Width > 0 && C.Y >= 0 && C.X >= 0 &&
      C.Height <= Height - C.Y && C.Width <= Width - C.X)
    return Status::success();
  return Status::error("crop of " + std::to_string(C.Width) + "x" +
                       std::to_string(C.Height) + " pixels at (" +
                       std::to_string(C.X) + ", " + std::to_string(C.Y) +
                       ") is outside the " + std::to_string(Width) + "x" +
                       std::to_string(Height) + " image");
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

Status decodePng(const void *Data, size_t Size, int Channels,
                 std::vector<uint8_t> &Pixels, int &Height, int &Width) {
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

} // namespace

/// One decompressor, reused for every image (creating one sets up its
/// memory pools). Every decode ends in jpeg_finish_decompress or
/// jpeg_abort_decompress, which leave it ready for the next image. No
/// object with a destructor may live across a libjpeg call: the error path
/// longjmps over it.
struct ImageDecoder::Jpeg {
  jpeg_decompress_struct Info;
  JpegErrors Err;
  bool Created = false;
  std::vector<JSAMPROW> Rows;

  Jpeg() {
    Info.err = jpeg_std_error(&Err.Mgr);
    Err.Mgr.error_exit = jpegFail;
    Err.Mgr.emit_message = jpegMessage;
    if (setjmp(Err.Jump))
      return; // Out of memory; decoding says so.
    jpeg_create_decompress(&Info);
    Created = true;
  }
  ~Jpeg() {
    if (Created)
      jpeg_destroy_decompress(&Info);
  }

  Status failure() {
    jpeg_abort_decompress(&Info);
    return Status::error(std::string("undecodable JPEG: ") + Err.Message);
  }

  /// Reads the header, leaving the decompressor ready to decode.
  Status header(const void *Data, size_t Size, int &Height, int &Width) {
    if (!Created)
      return Status::error("cannot initialise libjpeg");
    if (setjmp(Err.Jump))
      return failure();
    jpeg_mem_src(&Info, static_cast<const unsigned char *>(Data),
                 static_cast<unsigned long>(Size));
    jpeg_read_header(&Info, TRUE);
    Height = static_cast<int>(Info.image_height);
    Width = static_cast<int>(Info.image_width);
    return Status::success();
  }

  /// Decodes \p Crop (null: the whole image) into \p Pixels, in rows of the
  /// decoded width.
  Status decode(const void *Data, size_t Size, int Channels,
                const PixelRect *Crop, std::vector<uint8_t> &Pixels,
                PixelView &Out) {
    int Height = 0, Width = 0;
    if (Status S = header(Data, Size, Height, Width); !S.ok())
      return S;
    Status Bad = checkSize(Height, Width);
    if (Bad.ok() && Crop)
      Bad = checkCrop(*Crop, Height, Width);
    if (!Bad.ok()) {
      jpeg_abort_decompress(&Info);
      return Bad;
    }
    const PixelRect C = Crop ? *Crop : PixelRect{0, 0, Height, Width};
    if (setjmp(Err.Jump))
      return failure();
    Info.out_color_space = Channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    Info.dct_method = JDCT_ISLOW;
    Info.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&Info);
    // One column more on each side: fancy upsampling of 4:2:x chroma treats
    // the edges of a cropped region as image edges, which changes the
    // outermost columns (by up to ~10 levels); with the margin those lie
    // outside the crop. And at least 16 columns: a region narrower than two
    // chroma samples makes libjpeg-turbo switch to box upsampling. Then the
    // crop equals a full decode bit for bit. libjpeg-turbo moves the start
    // left to an iMCU boundary.
    const int Left = std::max(C.X - 1, 0);
    const int Right = std::min(std::max(C.X + C.Width + 1, Left + 16), Width);
    JDIMENSION X0 = static_cast<JDIMENSION>(Left);
    JDIMENSION DecodedWidth = static_cast<JDIMENSION>(Right - Left);
    if (DecodedWidth < Info.output_width)
      jpeg_crop_scanline(&Info, &X0, &DecodedWidth);
    if (C.Y > 0)
      jpeg_skip_scanlines(&Info, static_cast<JDIMENSION>(C.Y));
    const size_t Stride = size_t(Info.output_width) * Info.output_components;
    Pixels.resize(Stride * C.Height);
    Rows.resize(C.Height);
    for (int R = 0; R < C.Height; ++R)
      Rows[R] = Pixels.data() + R * Stride;
    const JDIMENSION End = static_cast<JDIMENSION>(C.Y + C.Height);
    while (Info.output_scanline < End) {
      const JDIMENSION Row = Info.output_scanline;
      if (jpeg_read_scanlines(&Info, Rows.data() + (Row - C.Y), End - Row) ==
          0) {
        jpeg_abort_decompress(&Info);
        return Status::error("undecodable JPEG: no data for row " +
                             std::to_string(Row));
      }
    }
    // A decode that reached the last row reads on to the end of the image,
    // as a full decode must, so that damage there is reported; a crop that
    // ends higher stops here.
    if (Info.output_scanline == Info.output_height)
      jpeg_finish_decompress(&Info);
    else
      jpeg_abort_decompress(&Info);
    Out.Data = Pixels.data() + size_t(C.X - X0) * Channels;
    Out.Height = C.Height;
    Out.Width = C.Width;
    Out.Channels = Channels;
    Out.RowStride = Stride;
    return Status::success();
  }
};

ImageDecoder::ImageDecoder() : J(std::make_unique<Jpeg>()) {}
ImageDecoder::~ImageDecoder() = default;

Status ImageDecoder::readHeader(const void *Data, size_t Size, int &Height,
                                int &Width) {
  switch (detectImageFormat(Data, Size)) {
  case ImageFormat::Jpeg: {
    if (Status S = J->header(Data, Size, Height, Width); !S.ok())
      return S;
    jpeg_abort_decompress(&J->Info);
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
    PixelView V;
    Status S = J->decode(Data, Size, Channels, nullptr, Pixels, V);
    Height = V.Height;
    Width = V.Width;
    return S;
  }
  case ImageFormat::Png:
    return decodePng(Data, Size, Channels, Pixels, Height, Width);
  case ImageFormat::Unknown:
    break;
  }
  return Status::error("image is neither JPEG nor PNG");
}

Status ImageDecoder::decodeCrop(const void *Data, size_t Size, int Channels,
                                const PixelRect &Crop,
                                std::vector<uint8_t> &Pixels, PixelView &Out) {
  if (Channels != 1 && Channels != 3)
    return Status::error("can only decode to 1 or 3 channels");
  switch (detectImageFormat(Data, Size)) {
  case ImageFormat::Jpeg:
    return J->decode(Data, Size, Channels, &Crop, Pixels, Out);
  case ImageFormat::Png: {
    int Height = 0, Width = 0;
    if (Status S = decodePng(Data, Size, Channels, Pixels, Height, Width);
        !S.ok())
      return S;
    if (Status S = checkCrop(Crop, Height, Width); !S.ok())
      return S;
    Out.RowStride = size_t(Width) * Channels;
    Out.Data =
        Pixels.data() + Crop.Y * Out.RowStride + size_t(Crop.X) * Channels;
    Out.Height = Crop.Height;
    Out.Width = Crop.Width;
    Out.Channels = Channels;
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
