//===- Example.cpp - tf.Example records -----------------------------------===//

#include "fastnn/data/Example.h"

namespace fastnn::data {

Status parseExample(std::string_view Bytes, Example &Out) {
  if (Bytes.size() > static_cast<size_t>(INT32_MAX))
    return Status::error("tf.Example larger than 2 GiB");
  if (!Out.ParseFromArray(Bytes.data(), static_cast<int>(Bytes.size())))
    return Status::error("record is not a valid tf.Example");
  return Status::success();
}

void addBytesFeature(Example &E, const std::string &Key,
                     const std::vector<std::string_view> &Values) {
  auto *L =
      (*E.mutable_features()->mutable_feature())[Key].mutable_bytes_list();
  for (std::string_view V : Values)
    L->add_value(V.data(), V.size());
}

void addInt64Feature(Example &E, const std::string &Key,
                     const std::vector<int64_t> &Values) {
  auto *L =
      (*E.mutable_features()->mutable_feature())[Key].mutable_int64_list();
  for (int64_t V : Values)
    L->add_value(V);
}

void addFloatFeature(Example &E, const std::string &Key,
                     const std::vector<float> &Values) {
  auto *L =
      (*E.mutable_features()->mutable_feature())[Key].mutable_float_list();
  for (float V : Values)
    L->add_value(V);
}

std::string makeImageExample(std::string_view Encoded, std::string_view Format,
                             int64_t Label, int Height, int Width) {
  Example E;
  addBytesFeature(E, "image/encoded", {Encoded});
  addBytesFeature(E, "image/format", {Format});
  addInt64Feature(E, "image/class/label", {Label});
  addInt64Feature(E, "image/height", {Height});
  addInt64Feature(E, "image/width", {Width});
  return E.SerializeAsString();
}

} // namespace fastnn::data
