//===- Example.h - tf.Example records ---------------------------*- C++ -*-===//

#ifndef FASTNN_DATA_EXAMPLE_H
#define FASTNN_DATA_EXAMPLE_H

#include "fastnn/data/Status.h"
#include "fastnn/data/example.pb.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fastnn::data {

using tfexample::Example;
using tfexample::Feature;

/// Parses a serialized tf.train.Example; protobuf checks the wire format.
Status parseExample(std::string_view Bytes, Example &Out);

void addBytesFeature(Example &E, const std::string &Key,
                     const std::vector<std::string_view> &Values);
void addInt64Feature(Example &E, const std::string &Key,
                     const std::vector<int64_t> &Values);
void addFloatFeature(Example &E, const std::string &Key,
                     const std::vector<float> &Values);

/// Builds a record of FastNN's schema (image/encoded, image/format,
/// image/class/label, plus image/height and image/width as TF-slim writes).
std::string makeImageExample(std::string_view Encoded, std::string_view Format,
                             int64_t Label, int Height, int Width);

} // namespace fastnn::data

#endif // FASTNN_DATA_EXAMPLE_H
