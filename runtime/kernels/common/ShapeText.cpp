//===- ShapeText.cpp - shapes in messages ---------------------------------===//

#include "fastnn/runtime/ShapeText.h"

namespace fastnn::runtime {

namespace {
std::string joined(const std::vector<int64_t> &Shape) {
  std::string Text;
  for (size_t I = 0; I < Shape.size(); ++I)
    Text += (I ? ", " : "") + std::to_string(Shape[I]);
  return Text;
}
} // namespace

std::string shapeText(const std::vector<int64_t> &Shape) {
  return "[" + joined(Shape) + "]";
}

std::string numpyShapeText(const std::vector<int64_t> &Shape) {
  return "(" + joined(Shape) + (Shape.size() == 1 ? ",)" : ")");
}

std::string shapeText(const fnn_shape &Shape) {
  if (Shape.rank < 0 || Shape.rank > FNN_MAX_RANK)
    return "<rank " + std::to_string(Shape.rank) + ">";
  if (Shape.rank == 0)
    return "scalar";
  std::string Text;
  for (int64_t I = 0; I < Shape.rank; ++I)
    Text += (I ? "x" : "") + std::to_string(Shape.dims[I]);
  return Text;
}

} // namespace fastnn::runtime
