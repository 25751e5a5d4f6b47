//===- ExampleFuzzer.cpp - libFuzzer target for tf.Example parsing --------===//
//
// Parses the input as a tf.Example, extracts a sample under each image kind
// and, for encoded images of modest size, decodes and preprocesses them,
// both whole and as the pipeline does (inception's crop decoded alone).
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/DatasetSpec.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/Preprocess.h"

#include <vector>

using namespace fastnn::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static std::vector<DatasetSpec> Specs = [] {
    std::vector<DatasetSpec> V(3);
    builtinDatasetSpec("cifar10", V[0]);
    (void)parseDatasetSpec("image_kind = raw\nheight = 2\nwidth = 2\n"
                           "channels = 3\n",
                           "raw.spec", V[1]);
    (void)parseDatasetSpec("image_kind = float\nheight = 2\nwidth = 2\n"
                           "channels = 1\nfloat_scale = 255\n",
                           "float.spec", V[2]);
    return V;
  }();
  static ImageDecoder Dec;
  Example E;
  if (!parseExample(
           std::string_view(reinterpret_cast<const char *>(Data), Size), E)
           .ok())
    return 0;
  std::vector<uint8_t> Px;
  float Out[8 * 8 * 3];
  for (const DatasetSpec &Spec : Specs) {
    SampleView V;
    if (!extractSample(E, Spec, V).ok())
      continue;
    ImageRef Img;
    Img.Channels = Spec.Channels ? Spec.Channels : 3;
    if (V.Kind == ImageKind::Encoded) {
      int H, W;
      if (!Dec.readHeader(V.Bytes.data(), V.Bytes.size(), H, W).ok() ||
          int64_t(H) * W > (1 << 20))
        continue;
      Rng R(Size);
      OutputShape Sh{8, 8, 3, Layout::NHWC};
      PreprocessPlan Plan;
      PixelView Crop;
      if (planPreprocessing(PreprocessKind::Inception, true, H, W, Sh, R, Plan)
              .ok() &&
          Dec.decodeCrop(V.Bytes.data(), V.Bytes.size(), 3, Plan.Source, Px,
                         Crop)
              .ok()) {
        ImageRef C;
        C.U8 = Crop.Data, C.Height = Crop.Height, C.Width = Crop.Width;
        C.Channels = 3, C.RowStride = Crop.RowStride;
        (void)applyPreprocessing(Plan, C, Sh, Out);
      }
      if (!Dec.decode(V.Bytes.data(), V.Bytes.size(), 3, Px, H, W).ok())
        continue;
      Img.U8 = Px.data(), Img.Height = H, Img.Width = W, Img.Channels = 3;
    } else if (V.Kind == ImageKind::Raw) {
      Img.U8 = reinterpret_cast<const uint8_t *>(V.Bytes.data());
      Img.Height = Spec.Height, Img.Width = Spec.Width;
    } else {
      Img.F32 = V.Floats, Img.FloatScale = Spec.FloatScale;
      Img.Height = Spec.Height, Img.Width = Spec.Width;
    }
    Rng R(Size);
    OutputShape Sh{8, 8, Img.Channels, Layout::NCHW};
    for (PreprocessKind K : {PreprocessKind::Inception,
                             PreprocessKind::Cifarnet, PreprocessKind::Vgg})
      (void)preprocessImage(K, true, Img, Sh, R, Out);
  }
  return 0;
}
