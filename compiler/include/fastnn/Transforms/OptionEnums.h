//===- OptionEnums.h - the enum-valued options of fastnn passes -*- C++ -*-===//
//
// The value sets of pass and pipeline options, each with its spellings in
// one place: the option parser rejects any other value, naming the allowed
// ones.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRANSFORMS_OPTIONENUMS_H
#define FASTNN_TRANSFORMS_OPTIONENUMS_H

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "llvm/Support/CommandLine.h"

namespace fastnn {

/// The element type of the low-precision ops.
enum class Precision { FP32, FP16, BF16 };

/// The backend whose kernels the model runs on.
enum class Target { CPU, CUDA };

/// The layout fastnn-layout gives the kernels: the target's choice or a
/// fixed one.
enum class LayoutChoice { Auto, NCHW, NHWC };

/// The layout of a function's inputs after fastnn-layout.
enum class InputLayout { Kernels, Model, Reads };

inline llvm::cl::ValuesClass precisionValues() {
  return llvm::cl::values(
      clEnumValN(Precision::FP32, "fp32", "float32 throughout"),
      clEnumValN(Precision::FP16, "fp16", "float16 compute"),
      clEnumValN(Precision::BF16, "bf16", "bfloat16 compute"));
}

inline llvm::cl::ValuesClass targetValues() {
  return llvm::cl::values(clEnumValN(Target::CPU, "cpu", "oneDNN"),
                          clEnumValN(Target::CUDA, "cuda", "cuDNN"));
}

inline llvm::cl::ValuesClass layoutValues() {
  return llvm::cl::values(
      clEnumValN(LayoutChoice::Auto, "auto", "the target's choice"),
      clEnumValN(LayoutChoice::NCHW, "nchw", "channels first"),
      clEnumValN(LayoutChoice::NHWC, "nhwc", "channels last"));
}

inline llvm::cl::ValuesClass inputLayoutValues() {
  return llvm::cl::values(
      clEnumValN(InputLayout::Kernels, "kernels",
                 "the layout the first ops take"),
      clEnumValN(InputLayout::Model, "model", "as the model declares it"),
      clEnumValN(InputLayout::Reads, "reads",
                 "the layout the model's own ops read it in"));
}

/// The value that `name` spells among `values`, as the option parser reads
/// it (for values given elsewhere, e.g. in hyperparameters).
template <typename Enum>
std::optional<Enum> parseOptionValue(const llvm::cl::ValuesClass &values,
                                     llvm::StringRef name) {
  struct Matcher {
    llvm::StringRef wanted;
    std::optional<Enum> found;
    Matcher &getParser() { return *this; }
    void addLiteralOption(llvm::StringRef spelling, int value,
                          llvm::StringRef) {
      if (spelling == wanted)
        found = static_cast<Enum>(value);
    }
  } matcher{name, std::nullopt};
  values.apply(matcher);
  return matcher.found;
}

/// The optimizers of the dialect's Optimizer enum, under its spellings, as
/// option values.
struct OptimizerValues {
  template <typename OptionT> void apply(OptionT &option) const {
    for (uint32_t value = 0; value <= mlir::fastnn::getMaxEnumValForOptimizer();
         ++value)
      if (std::optional<mlir::fastnn::Optimizer> optimizer =
              mlir::fastnn::symbolizeOptimizer(value))
        option.getParser().addLiteralOption(
            mlir::fastnn::stringifyOptimizer(*optimizer), *optimizer, "");
  }
};

} // namespace fastnn

#endif // FASTNN_TRANSFORMS_OPTIONENUMS_H
