//===- Convolution.cpp - fnn_conv2d on CUDA (cuDNN) -----------------------===//
//
// Forward: cudnnConvolutionForward, then the bias as cudnnAddTensor and the
// ReLU as cudnnActivationForward, in place. Backward: cudnnConvolution-
// BackwardFilter (first, as on the CPU), BackwardData only when grad_input
// is wanted, BackwardBias for grad_bias. Groups (and depthwise) through
// cudnnSetConvolutionGroupCount, dilations in the convolution descriptor;
// filters OIHW (NCHW) or OHWI (NHWC) are cuDNN's NCHW / NHWC filter formats.
//
// Algorithms come from cuDNN's heuristics (Get_v7) at create, which need no
// buffers (cudnnFind* would run every candidate on memory the create does
// not have); the first that cuDNN says works is taken, deterministic ones
// first for the backward passes (no atomics: the same bits every run). Each
// kernel reserves the device workspace its algorithms need.
// float32 runs without TF32 (CUDNN_FMA_MATH) so results match the CPU to
// float32 rounding; float16 and bfloat16 use tensor cores and accumulate in
// float32.
//
// cuDNN's pads are symmetric; the ABI's (top, left, bottom, right) may not
// be (TensorFlow's SAME padding puts the odd one at the end). Then the
// kernel pads the input explicitly into a buffer of its own (Kernels.cu) and
// convolves it without padding; the backward's data gradient is computed
// for the padded input and cropped.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

#include <vector>

using namespace fastnn::cuda;

namespace {

TensorDescriptor descriptorOf(const ActivationShape &S, int64_t DType) {
  fnn_shape Shape{
      4,
      {S.N, S.Nhwc ? S.H : S.C, S.Nhwc ? S.W : S.H, S.Nhwc ? S.C : S.W, 0, 0}};
  return activationDescriptor(Shape, S.Nhwc ? FNN_NHWC : FNN_NCHW, DType);
}

struct ConvKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  int64_t DType = FNN_F32;
  ActivationShape Input{}, PaddedInput{};
  int64_t PadTop = 0, PadLeft = 0;
  bool ExplicitPad = false;
  TensorDescriptor X, Y, Bias;
  FilterDescriptor W;
  ConvolutionDescriptor Forward, BackwardData, BackwardFilter;
  cudnnConvolutionFwdAlgo_t ForwardAlgo{};
  cudnnConvolutionBwdDataAlgo_t DataAlgo{};
  cudnnConvolutionBwdFilterAlgo_t FilterAlgo{};
  size_t ForwardBytes = 0, DataBytes = 0, FilterBytes = 0;
  bool HasBias = false, Accumulate = false;
  /// FNN_POST_RELU or FNN_POST_RELU6 after the bias, or FNN_POST_NONE.
  int64_t Activation = FNN_POST_NONE;
  ActivationDescriptor ActivationDesc;
  /// The explicitly padded input (and its gradient), when pads are
  /// asymmetric.
  DeviceBuffer Padded, PaddedGrad;
};

ConvolutionDescriptor convolutionDescriptor(const fnn_conv2d_desc &D, int PadH,
                                            int PadW) {
  ConvolutionDescriptor C(cudnnCreateConvolutionDescriptor);
  check(cudnnSetConvolution2dDescriptor(
            C.get(), PadH, PadW, static_cast<int>(D.strides[0]),
            static_cast<int>(D.strides[1]), static_cast<int>(D.dilations[0]),
            static_cast<int>(D.dilations[1]), CUDNN_CROSS_CORRELATION,
            CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
  check(cudnnSetConvolutionGroupCount(C.get(), static_cast<int>(D.groups)),
        "cudnnSetConvolutionGroupCount");
  // No TF32 for float32: the CPU's rounding.
  check(cudnnSetConvolutionMathType(C.get(), D.dtype == FNN_F32
                                                 ? CUDNN_FMA_MATH
                                                 : CUDNN_TENSOR_OP_MATH),
        "cudnnSetConvolutionMathType");
  return C;
}

bool usesTensorCores(cudnnMathType_t Math) {
  return Math == CUDNN_TENSOR_OP_MATH ||
         Math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/// The math type to run \p Chosen with: float32 stays on FMA math.
cudnnMathType_t mathFor(int64_t DType, cudnnMathType_t Chosen) {
  return DType == FNN_F32 ? CUDNN_FMA_MATH : Chosen;
}

/// The first usable result, deterministic ones first when \p Deterministic.
/// For float32 no tensor-core algorithm qualifies: the heuristics may still
/// offer TF32 ones, whose 10-bit mantissas the CPU does not have.
template <typename Perf>
const Perf &choose(const Perf *Results, int Count, int64_t DType,
                   bool Deterministic, const char *What) {
  for (int Pass = Deterministic ? 0 : 1; Pass < 2; ++Pass)
    for (int I = 0; I < Count; ++I)
      if (Results[I].status == CUDNN_STATUS_SUCCESS &&
          (DType != FNN_F32 || !usesTensorCores(Results[I].mathType)) &&
          (Pass == 1 || Results[I].determinism == CUDNN_DETERMINISTIC))
        return Results[I];
  throw KernelError(std::string("cuDNN has no ") + What +
                    " algorithm for this convolution");
}

std::unique_ptr<ConvKernel> build(fnn_device &Device, const fnn_conv2d_desc &D,
                                  bool Backward) {
  fastnn::runtime::checkConv2dOperands(D);
  if (Backward && D.post_op != FNN_POST_NONE)
    throw KernelError("post_op must be FNN_POST_NONE for the backward (the "
                      "compiler applies the relu gradient itself)");
  fastnn::runtime::checkConv2dGeometry(D);
  const bool Nhwc = D.layout == FNN_NHWC;
  ActivationShape In = activationShape(D.input, D.layout);
  ActivationShape Out = activationShape(D.output, D.layout);
  const fastnn::runtime::Conv2dFilter F = fastnn::runtime::conv2dFilter(D);
  int64_t O = F.Out, I = F.In, KH = F.Height, KW = F.Width;

  auto K = std::make_unique<ConvKernel>(Device);
  K->DType = D.dtype;
  K->Input = K->PaddedInput = In;
  K->HasBias = D.has_bias != 0;
  K->Accumulate = (D.post_op & FNN_POST_ACCUMULATE) != 0;
  K->Activation = D.post_op & FNN_POST_ACTIVATION_MASK;
  int PadH = static_cast<int>(D.pads[0]), PadW = static_cast<int>(D.pads[1]);
  K->ExplicitPad = D.pads[0] != D.pads[2] || D.pads[1] != D.pads[3];
  if (K->ExplicitPad) {
    K->PadTop = D.pads[0];
    K->PadLeft = D.pads[1];
    K->PaddedInput.H += D.pads[0] + D.pads[2];
    K->PaddedInput.W += D.pads[1] + D.pads[3];
    size_t Bytes = static_cast<size_t>(K->PaddedInput.N * K->PaddedInput.C *
                                       K->PaddedInput.H * K->PaddedInput.W) *
                   elementBytes(D.dtype);
    K->Padded = DeviceBuffer(Bytes);
    if (Backward)
      K->PaddedGrad = DeviceBuffer(Bytes);
    PadH = PadW = 0;
  }
  K->X = descriptorOf(K->PaddedInput, D.dtype);
  K->Y = descriptorOf(Out, D.dtype);
  K->W = FilterDescriptor(cudnnCreateFilterDescriptor);
  check(cudnnSetFilter4dDescriptor(K->W.get(), cudnnType(D.dtype),
                                   Nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                   static_cast<int>(O), static_cast<int>(I),
                                   static_cast<int>(KH), static_cast<int>(KW)),
        "cudnnSetFilter4dDescriptor");
  if (K->HasBias) {
    K->Bias = TensorDescriptor(cudnnCreateTensorDescriptor);
    check(cudnnSetTensor4dDescriptor(K->Bias.get(), CUDNN_TENSOR_NCHW,
                                     cudnnType(D.dtype), 1, static_cast<int>(O),
                                     1, 1),
          "cudnnSetTensor4dDescriptor");
  }
  if (K->Activation != FNN_POST_NONE)
    K->ActivationDesc = activationDescriptor(K->Activation);

  cudnnHandle_t H = Device.Cudnn;
  int Count = 0;
  if (!Backward) {
    K->Forward = convolutionDescriptor(D, PadH, PadW);
    cudnnConvolutionFwdAlgoPerf_t Perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    check(cudnnGetConvolutionForwardAlgorithm_v7(
              H, K->X.get(), K->W.get(), K->Forward.get(), K->Y.get(),
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &Count, Perf),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    const auto &Best = choose(Perf, Count, D.dtype, false, "forward");
    K->ForwardAlgo = Best.algo;
    check(cudnnSetConvolutionMathType(K->Forward.get(),
                                      mathFor(D.dtype, Best.mathType)),
          "cudnnSetConvolutionMathType");
    check(cudnnGetConvolutionForwardWorkspaceSize(
              H, K->X.get(), K->W.get(), K->Forward.get(), K->Y.get(),
              K->ForwardAlgo, &K->ForwardBytes),
          "cudnnGetConvolutionForwardWorkspaceSize");
    reserveWorkspace(Device, K->ForwardBytes);
    return K;
  }
  K->BackwardData = convolutionDescriptor(D, PadH, PadW);
  cudnnConvolutionBwdDataAlgoPerf_t
      DataPerf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  check(cudnnGetConvolutionBackwardDataAlgorithm_v7(
            H, K->W.get(), K->Y.get(), K->BackwardData.get(), K->X.get(),
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &Count, DataPerf),
        "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  const auto &BestData =
      choose(DataPerf, Count, D.dtype, true, "backward-data");
  K->DataAlgo = BestData.algo;
  check(cudnnSetConvolutionMathType(K->BackwardData.get(),
                                    mathFor(D.dtype, BestData.mathType)),
        "cudnnSetConvolutionMathType");
  check(cudnnGetConvolutionBackwardDataWorkspaceSize(
            H, K->W.get(), K->Y.get(), K->BackwardData.get(), K->X.get(),
            K->DataAlgo, &K->DataBytes),
        "cudnnGetConvolutionBackwardDataWorkspaceSize");

  K->BackwardFilter = convolutionDescriptor(D, PadH, PadW);
  cudnnConvolutionBwdFilterAlgoPerf_t
      FilterPerf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            H, K->X.get(), K->Y.get(), K->BackwardFilter.get(), K->W.get(),
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &Count, FilterPerf),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  const auto &BestFilter =
      choose(FilterPerf, Count, D.dtype, true, "backward-filter");
  K->FilterAlgo = BestFilter.algo;
  check(cudnnSetConvolutionMathType(K->BackwardFilter.get(),
                                    mathFor(D.dtype, BestFilter.mathType)),
        "cudnnSetConvolutionMathType");
  check(cudnnGetConvolutionBackwardFilterWorkspaceSize(
            H, K->X.get(), K->Y.get(), K->BackwardFilter.get(), K->W.get(),
            K->FilterAlgo, &K->FilterBytes),
        "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  reserveWorkspace(Device, std::max(K->DataBytes, K->FilterBytes));
  return K;
}

/// The input cuDNN reads: the caller's, or its explicitly padded copy.
const void *convolvedInput(ConvKernel &K, const void *Input) {
  if (!K.ExplicitPad)
    return Input;
  launchPadCopy(elementBytes(K.DType), K.Input, K.PaddedInput, K.PadTop,
                K.PadLeft, Input, K.Padded.get(), false, K.Device.Compute);
  return K.Padded.get();
}

/// One convolution on the compute stream; \p Function names the ABI call in
/// a failure's fnn_last_error, and false means one was recorded.
bool convolve(ConvKernel &K, const char *Function, const void *Input,
              const void *Filter, const void *Bias, void *Output) {
  cudnnHandle_t H = K.Device.Cudnn;
  if (!succeeded(cudnnConvolutionForward(
                     H, &One, K.X.get(), convolvedInput(K, Input), K.W.get(),
                     Filter, K.Forward.get(), K.ForwardAlgo, K.Device.Workspace,
                     K.ForwardBytes, K.Accumulate ? &One : &Zero, K.Y.get(),
                     Output),
                 Function, "cudnnConvolutionForward"))
    return false;
  if (K.HasBias && !succeeded(cudnnAddTensor(H, &One, K.Bias.get(), Bias, &One,
                                             K.Y.get(), Output),
                              Function, "cudnnAddTensor"))
    return false;
  return K.Activation == FNN_POST_NONE ||
         succeeded(cudnnActivationForward(H, K.ActivationDesc.get(), &One,
                                          K.Y.get(), Output, &Zero, K.Y.get(),
                                          Output),
                   Function, "cudnnActivationForward");
}

/// cuDNN has no fused depthwise convolution: the chain is its convolutions
/// in turn, through the caller's intermediate buffers.
struct ConvChainKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  std::vector<std::unique_ptr<ConvKernel>> Convs;
};
} // namespace

extern "C" fnn_kernel *fnn_conv2d_create(fnn_device *Device,
                                         const fnn_conv2d_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_conv2d_create", Device, Desc,
      [Device](const fnn_conv2d_desc &D) { return build(*Device, D, false); },
      [](const fnn_conv2d_desc &D) {
        return fastnn::runtime::describeConv2d(D, "");
      });
}

extern "C" void fnn_conv2d_forward(fnn_kernel *Handle, const void *Input,
                                   const void *Filter, const void *Bias,
                                   void *Output) {
  convolve(static_cast<ConvKernel &>(*Handle), "fnn_conv2d_forward", Input,
           Filter, Bias, Output);
}

extern "C" fnn_kernel *
fnn_conv2d_chain_create(fnn_device *Device, const fnn_conv2d_chain_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_conv2d_chain_create", Device, Desc,
      [Device](const fnn_conv2d_chain_desc &D) {
        fastnn::runtime::checkConv2dChain(D);
        auto K = std::make_unique<ConvChainKernel>(*Device);
        for (int64_t I = 0; I < D.count; ++I)
          K->Convs.push_back(build(*Device, D.convs[I], false));
        return K;
      },
      fastnn::runtime::describeConv2dChain);
}

extern "C" void fnn_conv2d_chain_forward(fnn_kernel *Handle, const void *Input,
                                         const void *Filter0, const void *Bias0,
                                         void *Output0, const void *Filter1,
                                         const void *Bias1, void *Output1,
                                         const void *Filter2, const void *Bias2,
                                         void *Output2) {
  auto &K = static_cast<ConvChainKernel &>(*Handle);
  const void *Filters[] = {Filter0, Filter1, Filter2};
  const void *Biases[] = {Bias0, Bias1, Bias2};
  void *Outputs[] = {Output0, Output1, Output2};
  const void *From = Input;
  for (size_t I = 0; I < K.Convs.size(); ++I) {
    if (!convolve(*K.Convs[I], "fnn_conv2d_chain_forward", From, Filters[I],
                  Biases[I], Outputs[I]))
      return;
    From = Outputs[I];
  }
}

extern "C" fnn_kernel *fnn_conv2d_backward_create(fnn_device *Device,
                                                  const fnn_conv2d_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_conv2d_backward_create", Device, Desc,
      [Device](const fnn_conv2d_desc &D) { return build(*Device, D, true); },
      [](const fnn_conv2d_desc &D) {
        return fastnn::runtime::describeConv2d(D, " backward");
      });
}

extern "C" void fnn_conv2d_backward(fnn_kernel *Handle, const void *Input,
                                    const void *Filter, const void *GradOutput,
                                    void *GradInput, void *GradFilter,
                                    void *GradBias) {
  auto &K = static_cast<ConvKernel &>(*Handle);
  const char *Function = "fnn_conv2d_backward";
  cudnnHandle_t H = K.Device.Cudnn;
  if (GradFilter &&
      !succeeded(cudnnConvolutionBackwardFilter(
                     H, &One, K.X.get(), convolvedInput(K, Input), K.Y.get(),
                     GradOutput, K.BackwardFilter.get(), K.FilterAlgo,
                     K.Device.Workspace, K.FilterBytes, &Zero, K.W.get(),
                     GradFilter),
                 Function, "cudnnConvolutionBackwardFilter"))
    return;
  if (GradBias && K.HasBias &&
      !succeeded(cudnnConvolutionBackwardBias(H, &One, K.Y.get(), GradOutput,
                                              &Zero, K.Bias.get(), GradBias),
                 Function, "cudnnConvolutionBackwardBias"))
    return;
  if (!GradInput)
    return;
  void *Dx = K.ExplicitPad ? K.PaddedGrad.get() : GradInput;
  if (!succeeded(cudnnConvolutionBackwardData(
                     H, &One, K.W.get(), Filter, K.Y.get(), GradOutput,
                     K.BackwardData.get(), K.DataAlgo, K.Device.Workspace,
                     K.DataBytes, &Zero, K.X.get(), Dx),
                 Function, "cudnnConvolutionBackwardData"))
    return;
  if (K.ExplicitPad)
    launchPadCopy(elementBytes(K.DType), K.Input, K.PaddedInput, K.PadTop,
                  K.PadLeft, Dx, GradInput, true, K.Device.Compute);
}
