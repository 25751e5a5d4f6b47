//===- DatasetSpec.h - Which features hold the image and label --*- C++ -*-===//
//
// A dataset spec is what FastNN's per-dataset parse_fn was: the feature names
// and kinds of the image and the label. Built-ins cover FastNN's schema
// (mock, cifar10, mnist, flowers); a small text file describes any other
// layout (see docs/datasets.md for the format).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_DATASETSPEC_H
#define FASTNN_DATA_DATASETSPEC_H

#include "fastnn/data/Example.h"
#include "fastnn/data/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fastnn::data {

enum class ImageKind {
  Encoded,  ///< JPEG or PNG bytes.
  Raw,      ///< uint8 pixels, height x width x channels, in a bytes feature.
  FloatList ///< float pixels, height x width x channels, in a float list.
};

struct DatasetSpec {
  std::string Name;
  bool Mock = false; ///< Synthetic images and labels; no files are read.
  ImageKind Kind = ImageKind::Encoded;
  std::string ImageFeature = "image/encoded";
  std::string FormatFeature = "image/format";
  std::string DefaultFormat = "png";
  std::string LabelFeature = "image/class/label";
  int64_t DefaultLabel = 0; ///< FixedLenFeature default when absent.
  int64_t LabelOffset = 0;  ///< Added to every label (e.g. -1 for 1-based).
  /// Stored image size. Required for raw and float images; for encoded ones
  /// it is the natural output size (0 when images vary, e.g. flowers).
  int Height = 0, Width = 0, Channels = 0;
  /// Float-list pixels are multiplied by this to reach the 0..255 scale the
  /// preprocessing functions expect (255 for images stored in [0,1]).
  float FloatScale = 1.0f;
  int NumClasses = 0; ///< 0: labels unchecked.
};

/// A built-in name (mock, cifar10, mnist, flowers) or the path of a spec file.
Status loadDatasetSpec(const std::string &NameOrPath, DatasetSpec &Out);
bool builtinDatasetSpec(const std::string &Name, DatasetSpec &Out);
/// Parses spec text; \p Source names it in errors ("file:line: ...").
Status parseDatasetSpec(std::string_view Text, const std::string &Source,
                        DatasetSpec &Out);

/// The image and label of one record, pointing into the parsed Example.
struct SampleView {
  ImageKind Kind = ImageKind::Encoded;
  std::string_view Bytes;        ///< Encoded or raw pixels.
  const float *Floats = nullptr; ///< FloatList pixels.
  size_t FloatCount = 0;
  std::string_view Format; ///< "jpeg", "png", ... (informational).
  int64_t Label = 0;
};

Status extractSample(const Example &E, const DatasetSpec &Spec,
                     SampleView &Out);

} // namespace fastnn::data

#endif // FASTNN_DATA_DATASETSPEC_H
