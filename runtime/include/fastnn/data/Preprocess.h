//===- Preprocess.h - TF-slim style image preprocessing ---------*- C++ -*-===//
//
// The preprocessing functions of TF-slim's preprocessing_factory, each fused
// into one pass that samples the decoded image (crop, resize, flip) and
// writes the normalised value straight into the batch buffer.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_PREPROCESS_H
#define FASTNN_DATA_PREPROCESS_H

#include "fastnn/data/Image.h"
#include "fastnn/data/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace fastnn::data {

enum class PreprocessKind { None, Inception, Vgg, Cifarnet, Lenet };

/// TF-slim's rule: preprocessing_name if given, else the model_name's
/// function (inception_*, resnet_*, vgg_*, mobilenet_*, cifarnet, lenet...).
/// "none" or an empty pair gives None (values scaled to [0,1], resized only
/// when the image size differs from the output).
Status resolvePreprocessing(const std::string &PreprocessingName,
                            const std::string &ModelName, PreprocessKind &Out);
const char *preprocessingName(PreprocessKind K);

enum class Layout { NHWC, NCHW };
/// The element type of the batch buffer. Only float32 today; fp16/bf16 go
/// here and convert at the final store of the sampler.
enum class ElementType { Float32 };
inline size_t elementSize(ElementType) { return 4; }

struct OutputShape {
  int Height = 0, Width = 0, Channels = 0;
  Layout Order = Layout::NHWC;
  size_t elements() const { return size_t(Height) * Width * Channels; }
};

/// A decoded image: 8-bit pixels or floats (times FloatScale on the 0..255
/// scale), interleaved height x width x channels, rows RowStride values
/// apart (0: Width x Channels).
struct ImageRef {
  const uint8_t *U8 = nullptr;
  const float *F32 = nullptr;
  float FloatScale = 1.0f;
  int Height = 0, Width = 0, Channels = 0;
  size_t RowStride = 0;
};

/// splitmix64: tiny, good enough for crops and flips, and seedable per
/// sample so that results do not depend on which thread ran the sample.
class Rng {
public:
  explicit Rng(uint64_t Seed) : State(Seed) {}
  static Rng forSample(uint64_t Seed, uint64_t Index) {
    Rng R(Seed ^ (Index * 0x9e3779b97f4a7c15ull));
    R.next();
    return R;
  }
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double Lo, double Hi) { return Lo + (Hi - Lo) * uniform(); }
  /// Uniform in [0, N) for N > 0.
  uint64_t below(uint64_t N) { return next() % N; }

private:
  uint64_t State;
};

/// A window of an image in pixel units (fractional); parts outside the
/// image read zeros.
struct SourceWindow {
  double Y0 = 0, X0 = 0, H = 0, W = 0;
};

/// One sample's preprocessing, decided from the image size alone: the
/// random crop, flip and colour draws of the training functions and the
/// geometry of all of them. A JPEG header is enough to make one.
struct PreprocessPlan {
  PreprocessKind Kind = PreprocessKind::None;
  bool Training = false;
  /// The pixels the function reads: for inception, which crops before it
  /// resizes (the distorted box in training, the central crop in
  /// evaluation), that crop; for the others the whole image.
  PixelRect Source;
  /// What is sampled to the output size, in pixels of Source.
  SourceWindow Win;
  bool Flip = false;
  /// Inception: brightness delta on [0, 1] and saturation factor.
  /// Cifarnet: brightness delta on 0..255 and contrast factor.
  float Brightness = 0, Saturation = 1, Contrast = 1;
};

/// Makes the plan of one sample of a \p Height x \p Width image, drawing
/// its random numbers from \p R.
Status planPreprocessing(PreprocessKind Kind, bool Training, int Height,
                         int Width, const OutputShape &Shape, Rng &R,
                         PreprocessPlan &Plan);

/// Writes one preprocessed image (Shape.elements() floats) at \p Dst from
/// \p Src, the pixels of Plan.Source.
Status applyPreprocessing(const PreprocessPlan &Plan, const ImageRef &Src,
                          const OutputShape &Shape, float *Dst);

/// planPreprocessing and applyPreprocessing on the whole image \p Src.
Status preprocessImage(PreprocessKind Kind, bool Training, const ImageRef &Src,
                       const OutputShape &Shape, Rng &R, float *Dst);

} // namespace fastnn::data

#endif // FASTNN_DATA_PREPROCESS_H
