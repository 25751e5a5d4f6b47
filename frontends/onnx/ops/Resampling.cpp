//===- Resampling.cpp - ONNX Resize ---------------------------------------===//
//
// Resize in nearest, linear and cubic modes as products with constant
// interpolation matrices, one axis at a time: each output position's
// weights over the input positions follow ONNX's coordinate transformation
// and rounding rules, computed at import (static shapes). The products are
// matmuls, so the resize has the matmul gradient; nearest resizing by an
// integer factor that repeats each element is a broadcast between
// reshapes, which is exact and cheaper.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// How one axis is resampled: sizes, the scale the coordinate
/// transformations divide by, and the attributes that decide the weights.
struct AxisResampling {
  int64_t inputSize, outputSize;
  double scale;
  std::string coordinateMode, mode, nearestMode;
  double cubicCoefficient;
  bool antialias, excludeOutside;
  /// tf_crop_and_resize's region of this axis, as fractions of the input.
  double roiStart, roiEnd;
};

/// The input coordinate of output position `x` (ONNX Resize's
/// coordinate_transformation_mode). The output length in the formulas is
/// scale * input length, unrounded, as in ONNX's reference.
double sourceCoordinate(const AxisResampling &axis, double x) {
  double in = axis.inputSize, scale = axis.scale, out = scale * in;
  const std::string &mode = axis.coordinateMode;
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "align_corners")
    return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (mode == "tf_crop_and_resize") {
    double extent = (axis.roiEnd - axis.roiStart) * (in - 1);
    double offset = axis.roiStart * (in - 1);
    return offset + (out == 1 ? extent / 2 : x * extent / (out - 1));
  }
  if (mode == "half_pixel_symmetric") {
    double adjustment = axis.outputSize / out;
    double center = in / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;
}

int64_t nearestIndex(const AxisResampling &axis, double x) {
  const std::string &mode = axis.nearestMode;
  double rounded;
  if (mode == "floor")
    rounded = std::floor(x);
  else if (mode == "ceil")
    rounded = std::ceil(x);
  else if (x - std::floor(x) == 0.5)
    rounded = mode == "round_prefer_ceil" ? std::ceil(x) : std::floor(x);
  else
    rounded = std::round(x);
  return std::clamp<int64_t>(static_cast<int64_t>(rounded), 0,
                             axis.inputSize - 1);
}

/// The linear (triangle) or cubic (Keys, coefficient a) kernel at distance
/// d from the sample.
double kernelWeight(const AxisResampling &axis, double d) {
  d = std::abs(d);
  if (axis.mode == "linear")
    return std::max(0.0, 1 - d);
  double a = axis.cubicCoefficient;
  if (d <= 1)
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2)
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

/// Whether output position `o` lies outside the crop region
/// (tf_crop_and_resize), where it takes extrapolation_value.
bool outsideRegion(const AxisResampling &axis, int64_t o) {
  if (axis.coordinateMode != "tf_crop_and_resize")
    return false;
  double x = sourceCoordinate(axis, o);
  return x < 0 || x > axis.inputSize - 1;
}

/// The [output, input] matrix of weights, as ONNX's reference computes
/// them: one 1 per row for nearest; for linear and cubic the kernel over
/// the window of nearest inputs (preferring the left, so an integer
/// coordinate weighs 1 on itself), stretched by 1 / scale with antialias
/// when downsampling and then normalised, inputs beyond the edges reading
/// the edge (the reference pads by repeating it) or, with exclude_outside,
/// dropped and the rest renormalised. Rows outside a crop region are 0.
std::vector<double> interpolationMatrix(const AxisResampling &axis) {
  std::vector<double> weights(axis.outputSize * axis.inputSize, 0.0);
  double stretch = axis.antialias ? std::min(axis.scale, 1.0) : 1.0;
  double support = axis.mode == "linear" ? 1 : 2;
  int64_t start = static_cast<int64_t>(std::floor(-support / stretch)) + 1;
  for (int64_t o = 0; o < axis.outputSize; ++o) {
    if (outsideRegion(axis, o))
      continue;
    double x = sourceCoordinate(axis, o);
    double *row = &weights[o * axis.inputSize];
    if (axis.mode == "nearest") {
      row[nearestIndex(axis, x)] = 1;
      continue;
    }
    int64_t left = static_cast<int64_t>(std::ceil(x)) - 1;
    SmallVector<std::pair<int64_t, double>> taps;
    double total = 0;
    for (int64_t j = left + start; j <= left + 1 - start; ++j) {
      if (axis.excludeOutside && (j < 0 || j >= axis.inputSize))
        continue;
      taps.push_back({j, kernelWeight(axis, (j - x) * stretch)});
      total += taps.back().second;
    }
    bool normalize = axis.antialias || axis.excludeOutside;
    for (auto [j, w] : taps)
      row[std::clamp<int64_t>(j, 0, axis.inputSize - 1)] +=
          normalize ? w / total : w;
  }
  return weights;
}

/// True when every output position o reads input o / factor: nearest
/// resizing that repeats each element `factor` times.
bool repeatsElements(const AxisResampling &axis) {
  if (axis.mode != "nearest" || axis.outputSize % axis.inputSize != 0 ||
      axis.coordinateMode == "tf_crop_and_resize")
    return false;
  int64_t factor = axis.outputSize / axis.inputSize;
  for (int64_t o = 0; o < axis.outputSize; ++o)
    if (nearestIndex(axis, sourceCoordinate(axis, o)) != o / factor)
      return false;
  return true;
}

FailureOr<Value> transposeAxes(NodeImporter &n, Value value, int64_t a,
                               int64_t b) {
  if (a == b)
    return value;
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < cast<RankedTensorType>(value.getType()).getRank();
       ++d)
    perm.push_back(d == a ? b : d == b ? a : d);
  return n.create<TransposeOp>(
      value, {namedAttr(n, "permutation", i64Array(n, perm))});
}

/// Resamples axis `d` of `value`.
FailureOr<Value> resampleAxis(NodeImporter &n, Value value, int64_t d,
                              const AxisResampling &axis) {
  auto type = cast<RankedTensorType>(value.getType());
  if (repeatsElements(axis)) {
    SmallVector<int64_t> split, expanded, result(type.getShape());
    for (int64_t i = 0; i < type.getRank(); ++i) {
      split.push_back(type.getDimSize(i));
      expanded.push_back(type.getDimSize(i));
      if (i == d) {
        split.push_back(1);
        expanded.push_back(axis.outputSize / axis.inputSize);
      }
    }
    result[d] = axis.outputSize;
    Value repeated = n.fold(BroadcastOp::create(n.builder(), n.getLoc(),
                                                type.clone(expanded),
                                                n.reshape(value, split)));
    return n.reshape(repeated, result);
  }
  std::vector<double> weights = interpolationMatrix(axis);
  Type elementType = type.getElementType();
  SmallVector<Attribute> elements;
  for (double w : weights)
    elements.push_back(FloatAttr::get(elementType, w));
  Value matrix = ConstantOp::create(
      n.builder(), n.getLoc(),
      DenseElementsAttr::get(
          RankedTensorType::get({axis.outputSize, axis.inputSize}, elementType),
          elements));
  int64_t rank = type.getRank();
  if (d == rank - 1)
    return n.create<MatMulOp>(
        ValueRange{value, matrix},
        {namedAttr(n, "transpose_b", n.builder().getUnitAttr())});
  // Rows: the axis moved next to last, the matrix applied from the left.
  FailureOr<Value> moved = transposeAxes(n, value, d, rank - 2);
  if (failed(moved))
    return failure();
  FailureOr<Value> product = n.create<MatMulOp>(ValueRange{matrix, *moved});
  if (failed(product))
    return failure();
  return transposeAxes(n, *product, d, rank - 2);
}

/// Output sizes from input 3 (sizes) or input 2 (scales), for every axis or
/// those of the axes attribute (version 18, with keep_aspect_ratio_policy);
/// roi (input 1, starts then ends) matters only to tf_crop_and_resize,
/// whose positions outside the region take extrapolation_value: a constant
/// added where the interpolation matrices' rows are 0.
LogicalResult importResize(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  if (!isa<FloatType>(type.getElementType()))
    return n.error("expects a floating-point input");
  std::string mode = n.stringAttr("mode", "nearest");
  std::string coordinateMode =
      n.stringAttr("coordinate_transformation_mode", "half_pixel");
  std::string nearestMode = n.stringAttr("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.error("unknown mode '" + mode + "'");
  bool knownCoordinates =
      coordinateMode == "half_pixel" || coordinateMode == "asymmetric" ||
      coordinateMode == "align_corners" ||
      coordinateMode == "pytorch_half_pixel" ||
      coordinateMode == "tf_crop_and_resize" ||
      (coordinateMode == "half_pixel_symmetric" && n.version() >= 19);
  if (!knownCoordinates)
    return n.error("unknown coordinate_transformation_mode '" + coordinateMode +
                   "'");
  if (nearestMode != "round_prefer_floor" &&
      nearestMode != "round_prefer_ceil" && nearestMode != "floor" &&
      nearestMode != "ceil")
    return n.error("unknown nearest_mode '" + nearestMode + "'");
  double cubicCoefficient = n.floatAttr("cubic_coeff_a", -0.75);
  double extrapolation = n.floatAttr("extrapolation_value", 0.0);
  bool excludeOutside = n.intAttr("exclude_outside", 0) != 0;

  SmallVector<int64_t> axes;
  std::string policy = "stretch";
  bool antialias = false;
  if (n.version() >= 18) {
    if (auto given = n.intsAttr("axes")) {
      for (int64_t axis : *given) {
        FailureOr<int64_t> d = n.normalizeAxis(axis, rank);
        if (failed(d))
          return failure();
        axes.push_back(*d);
      }
    }
    policy = n.stringAttr("keep_aspect_ratio_policy", "stretch");
    antialias = n.intAttr("antialias", 0) != 0;
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);

  auto nonEmptyConstant = [&](size_t i) -> FailureOr<DenseElementsAttr> {
    if (!n.hasInput(i))
      return DenseElementsAttr();
    FailureOr<DenseElementsAttr> attr = n.constantInput(i);
    if (failed(attr) || attr->getNumElements() == 0)
      return attr;
    if (attr->getNumElements() != static_cast<int64_t>(axes.size())) {
      (void)n.error("input " + Twine(i) + " has " +
                    Twine(attr->getNumElements()) + " values for " +
                    Twine(axes.size()) + " axes");
      return failure();
    }
    return attr;
  };
  FailureOr<DenseElementsAttr> scales = nonEmptyConstant(2);
  FailureOr<DenseElementsAttr> sizes = nonEmptyConstant(3);
  if (failed(scales) || failed(sizes))
    return failure();
  bool hasScales = *scales && scales->getNumElements() > 0;
  bool hasSizes = *sizes && sizes->getNumElements() > 0;
  if (hasScales == hasSizes)
    return n.error("expects either scales (input 2) or sizes (input 3)");

  SmallVector<int64_t> outputSizes(type.getShape());
  SmallVector<double> axisScales(rank, 1.0);
  if (hasScales) {
    for (auto [i, value] : llvm::enumerate(scales->getValues<APFloat>())) {
      double scale = value.convertToDouble();
      if (!(scale > 0))
        return n.error("scales must be positive");
      int64_t d = axes[i];
      axisScales[d] = scale;
      outputSizes[d] =
          static_cast<int64_t>(std::floor(type.getDimSize(d) * scale));
    }
  } else {
    if (!sizes->getElementType().isInteger())
      return n.error("input 3 (sizes) must hold integers");
    SmallVector<int64_t> given;
    for (const APInt &v : sizes->getValues<APInt>())
      given.push_back(v.getSExtValue());
    if (policy != "stretch" && policy != "not_larger" &&
        policy != "not_smaller")
      return n.error("keep_aspect_ratio_policy '" + policy +
                     "' is not supported");
    double common = policy == "not_larger" ? INFINITY : 0;
    for (auto [i, size] : llvm::enumerate(given)) {
      if (size <= 0)
        return n.error("sizes must be positive");
      double ratio = static_cast<double>(size) / type.getDimSize(axes[i]);
      common = policy == "not_larger" ? std::min(common, ratio)
                                      : std::max(common, ratio);
    }
    for (auto [i, size] : llvm::enumerate(given)) {
      int64_t d = axes[i];
      if (policy == "stretch") {
        outputSizes[d] = size;
        axisScales[d] = static_cast<double>(size) / type.getDimSize(d);
      } else {
        axisScales[d] = common;
        outputSizes[d] =
            static_cast<int64_t>(std::round(type.getDimSize(d) * common));
      }
    }
  }

  SmallVector<double> roiStarts(rank, 0.0), roiEnds(rank, 1.0);
  bool crop = coordinateMode == "tf_crop_and_resize";
  if (crop) {
    FailureOr<DenseElementsAttr> roi = n.constantInput(1);
    if (failed(roi))
      return failure();
    SmallVector<double> values;
    if (isa<FloatType>(roi->getElementType()))
      for (const APFloat &v : roi->getValues<APFloat>())
        values.push_back(v.convertToDouble());
    if (values.size() != 2 * axes.size())
      return n.error("roi must hold " + Twine(2 * axes.size()) +
                     " floating-point values (starts, then ends)");
    for (auto [i, d] : llvm::enumerate(axes)) {
      roiStarts[d] = values[i];
      roiEnds[d] = values[i + axes.size()];
    }
  }

  Value result = *x;
  SmallVector<SmallVector<bool>> outside;
  for (int64_t d = 0; d < rank; ++d) {
    AxisResampling axis{type.getDimSize(d), outputSizes[d], axisScales[d],
                        coordinateMode,     mode,           nearestMode,
                        cubicCoefficient,   antialias,      excludeOutside,
                        roiStarts[d],       roiEnds[d]};
    outside.emplace_back(axis.outputSize, false);
    bool identity = axis.outputSize == axis.inputSize && axis.scale == 1.0 &&
                    (!crop || (axis.roiStart == 0 && axis.roiEnd == 1));
    if (identity)
      continue;
    if (axis.outputSize < 1)
      return n.error("axis " + Twine(d) + " would have size " +
                     Twine(axis.outputSize));
    for (int64_t o = 0; o < axis.outputSize; ++o)
      outside[d][o] = outsideRegion(axis, o);
    FailureOr<Value> resampled = resampleAxis(n, result, d, axis);
    if (failed(resampled))
      return failure();
    result = *resampled;
  }
  bool extrapolates = llvm::any_of(outside, [](ArrayRef<bool> positions) {
    return llvm::is_contained(positions, true);
  });
  if (!extrapolates || extrapolation == 0) {
    n.setOutput(0, result);
    return success();
  }
  // extrapolation_value wherever some axis is outside its region.
  auto resultType = cast<RankedTensorType>(result.getType());
  SmallVector<Attribute> fill;
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    bool anyOutside = false;
    for (int64_t d = 0; d < rank; ++d)
      anyOutside |= outside[d][index[d]];
    fill.push_back(FloatAttr::get(resultType.getElementType(),
                                  anyOutside ? extrapolation : 0.0));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < resultType.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  Value constant = ConstantOp::create(n.builder(), n.getLoc(),
                                      DenseElementsAttr::get(resultType, fill));
  return defineResult(n, n.create<AddOp>(ValueRange{result, constant}));
}

} // namespace

std::vector<OpRecord> resamplingOpRecords() {
  return {
      // roi, scales and sizes decide the shape. Version 18 adds axes,
      // antialias and keep_aspect_ratio_policy, 19 half_pixel_symmetric.
      {"Resize", importResize, {13, 18, 19}, {1, 2, 3}},
  };
}

} // namespace fastnn::onnx_import
