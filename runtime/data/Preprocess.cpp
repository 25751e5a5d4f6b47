//===- Preprocess.cpp - TF-slim style image preprocessing -----------------===//
//
// Every function reduces to: pick a source rectangle (crop, or a window
// beyond the image for padding), sample it bilinearly to the output size with
// TensorFlow's half-pixel centres (resize_images in TF2 / align_corners=False
// with half_pixel_centers), optionally mirror it, then map each pixel through
// a per-function normalisation. Doing all of it in the one pass that writes
// the batch buffer is what keeps preprocessing close to the cost of decoding.
// The rectangle and the random draws depend on the image size alone
// (planPreprocessing), so that a caller can decode only the pixels read.
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/Preprocess.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

// No fused multiply-adds, even in the AVX-512 copy (where the target would
// allow them): every path must round as the baseline one does.
#pragma STDC FP_CONTRACT OFF

namespace fastnn::data {

Status resolvePreprocessing(const std::string &PreprocessingName,
                            const std::string &ModelName, PreprocessKind &Out) {
  const std::string &Name =
      PreprocessingName.empty() ? ModelName : PreprocessingName;
  auto startsWith = [&](const char *P) { return Name.rfind(P, 0) == 0; };
  if (Name.empty() || Name == "none")
    Out = PreprocessKind::None;
  else if (Name == "cifarnet")
    Out = PreprocessKind::Cifarnet;
  else if (Name == "lenet")
    Out = PreprocessKind::Lenet;
  else if (startsWith("inception") || startsWith("mobilenet") ||
           startsWith("nasnet") || startsWith("pnasnet"))
    Out = PreprocessKind::Inception;
  else if (startsWith("vgg") || startsWith("resnet"))
    Out = PreprocessKind::Vgg;
  else if (!PreprocessingName.empty())
    return Status::error(
        "unknown preprocessing_name '" + Name +
        "' (expected none, inception, vgg, cifarnet or lenet)");
  else
    Out = PreprocessKind::None; // A model slim has no function for.
  return Status::success();
}

const char *preprocessingName(PreprocessKind K) {
  switch (K) {
  case PreprocessKind::None:
    return "none";
  case PreprocessKind::Inception:
    return "inception";
  case PreprocessKind::Vgg:
    return "vgg";
  case PreprocessKind::Cifarnet:
    return "cifarnet";
  case PreprocessKind::Lenet:
    return "lenet";
  }
  return "?";
}

namespace {

struct Taps {
  int I0, I1; // Element offsets of the two neighbours (already times stride).
  float Wt;   // Weight of I1.
  bool Valid; // False: outside the image (padding).
};

void makeTaps(std::vector<Taps> &T, int Out, double Start, double Len, int Size,
              int Stride, bool Reverse) {
  T.resize(Out);
  double Scale = Len / Out;
  for (int O = 0; O < Out; ++O) {
    double S = Start + (O + 0.5) * Scale - 0.5;
    Taps &Tp = T[Reverse ? Out - 1 - O : O];
    Tp.Valid = S >= -0.5 && S <= Size - 0.5;
    S = std::clamp(S, 0.0, double(Size - 1));
    int I0 = static_cast<int>(S);
    int I1 = std::min(I0 + 1, Size - 1);
    Tp.I0 = I0 * Stride;
    Tp.I1 = I1 * Stride;
    Tp.Wt = static_cast<float>(S - I0);
  }
}

/// Two RGB pixels, each in four lanes (the fourth is scratch): the unit of
/// the interleaved path. Lane-wise arithmetic rounds exactly as the scalar
/// code does, so both paths give the same bits. Nothing returns Pixels: the
/// maps and helpers work in place through references. Out of line (builds
/// that inline less, such as the sanitizer ones), a function compiled for
/// the baseline returns a 32-byte vector in two xmm registers where its
/// AVX caller reads ymm0, and half of each pair came back wrong.
using Pixels = float __attribute__((vector_size(32)));

/// A value map in two forms: \p Row maps an output row given as C planes of
/// OW values (the planar path), \p Pix two RGB pixels (the interleaved path).
/// Both work in place and must compute the same thing in the same order, so
/// that NCHW and NHWC outputs are equal bit for bit.
template <typename RowFn, typename PixFn> struct Map {
  RowFn Row;
  PixFn Pix;
};
template <typename RowFn, typename PixFn>
Map<RowFn, PixFn> makeMap(RowFn R, PixFn P) {
  return {R, P};
}

/// The horizontal taps of output pixels 2K and 2K+1, weights splatted over
/// each pixel's lanes.
struct PairTap {
  Pixels W0, W1;
  int I0[2], I1[2];
};

/// One output row of RGB into NHWC: the vertical blend of source rows
/// \p S0 and \p S1 into \p L, then per pair of output pixels two 4-lane loads
/// per tap, the map, and one store in the output's layout. A quarter of the
/// instructions of three scalar taps per pixel, a planar row map and an
/// interleaving store. Inlined into a baseline and an AVX2 copy.
template <typename SrcT, typename Fn>
[[gnu::always_inline]] inline void
rgbRow(const SrcT *__restrict S0, const SrcT *__restrict S1, float Wy0,
       float Wy, int N, float *__restrict L, const PairTap *Taps, int OW,
       const Fn &F, float *__restrict D) {
  for (int I = 0; I < N; ++I)
    L[I] = float(S0[I]) * Wy0 + float(S1[I]) * Wy;
  auto pair = [&](int K, Pixels &V) {
    const PairTap &T = Taps[K];
    float A[8], B[8];
    std::memcpy(A, L + T.I0[0], 16);
    std::memcpy(A + 4, L + T.I0[1], 16);
    std::memcpy(B, L + T.I1[0], 16);
    std::memcpy(B + 4, L + T.I1[1], 16);
    Pixels PA, PB;
    std::memcpy(&PA, A, sizeof(Pixels));
    std::memcpy(&PB, B, sizeof(Pixels));
    V = PA * T.W0 + PB * T.W1;
    F.Pix(V);
    V = __builtin_shufflevector(V, V, 0, 1, 2, 4, 5, 6, 3, 7);
  };
  // Each store covers two lanes of the next pair, which overwrites them; the
  // last pair stores only its own pixels, since the values after the row may
  // belong to another sample.
  const int Pairs = OW / 2;
  Pixels V;
  for (int K = 0; K + 1 < Pairs; ++K) {
    pair(K, V);
    std::memcpy(D + 6 * K, &V, sizeof(Pixels));
  }
  pair(Pairs - 1, V);
  std::memcpy(D + 6 * (Pairs - 1), &V, 6 * sizeof(float));
  if (OW % 2) {
    pair(Pairs, V);
    std::memcpy(D + 6 * Pairs, &V, 3 * sizeof(float));
  }
}

template <typename SrcT, typename Fn>
void rgbRowBase(const SrcT *S0, const SrcT *S1, float Wy0, float Wy, int N,
                float *L, const PairTap *Taps, int OW, const Fn &F, float *D) {
  rgbRow(S0, S1, Wy0, Wy, N, L, Taps, OW, F, D);
}

// Wider vectors for the machines that have them. FMA stays off (see the
// pragma at the top): it rounds differently, and batches must be the same
// bits on every x86-64 machine.
template <typename SrcT, typename Fn>
__attribute__((target("avx2"))) void
rgbRowAvx2(const SrcT *S0, const SrcT *S1, float Wy0, float Wy, int N, float *L,
           const PairTap *Taps, int OW, const Fn &F, float *D) {
  rgbRow(S0, S1, Wy0, Wy, N, L, Taps, OW, F, D);
}

template <typename SrcT, typename Fn>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void
rgbRowAvx512(const SrcT *S0, const SrcT *S1, float Wy0, float Wy, int N,
             float *L, const PairTap *Taps, int OW, const Fn &F, float *D) {
  rgbRow(S0, S1, Wy0, Wy, N, L, Taps, OW, F, D);
}

const bool HaveAvx2 = __builtin_cpu_supports("avx2");
const bool HaveAvx512 =
    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");

/// Samples Win of Src into Dst (C output channels). Separable, vertical
/// first: the two source rows of an output row are blended over the columns
/// the window touches (a contiguous loop that vectorises), then each output
/// pixel takes two taps of that row, then \p F maps the values before the
/// store. This costs about a third of a per-pixel 4-tap loop. RGB into NHWC,
/// the common case, takes rgbRow; other cases take the taps per channel into
/// planes.
template <int C, typename SrcT, typename Fn>
void sample(const SrcT *Src, float SrcScale, int SH, int SW, int SC,
            size_t Stride, const SourceWindow &Win, bool Flip,
            const OutputShape &Shape, const Fn &F, float *Dst) {
  thread_local std::vector<Taps> Rows, Cols;
  thread_local std::vector<float> Line, Out;
  const int OH = Shape.Height, OW = Shape.Width;
  makeTaps(Rows, OH, Win.Y0, Win.H, SH, 1, false);
  makeTaps(Cols, OW, Win.X0, Win.W, SW, SC, Flip);
  int Lo = INT32_MAX, Hi = 0;
  for (const Taps &T : Cols) {
    Lo = std::min(Lo, T.I0);
    Hi = std::max(Hi, T.I1 + SC);
  }
  // Two weights per tap; padding columns get zero weights, and the source
  // scale is folded in, so the inner loop has no branch.
  struct Tap2 {
    int I0, I1;
    float W0, W1;
  };
  thread_local std::vector<Tap2> Col2;
  Col2.resize(OW);
  for (int X = 0; X < OW; ++X) {
    const Taps &T = Cols[X];
    float S = T.Valid ? SrcScale : 0.0f;
    Col2[X] = {T.I0 - Lo, T.I1 - Lo, (1.0f - T.Wt) * S, T.Wt * S};
  }
  const int N = Hi - Lo;
  // One spare value: a pixel load at the last pixel reads 4 lanes.
  Line.resize(N + 1);
  Line[N] = 0.0f;
  float *L = Line.data();
  // Maps of gray output take floats only and cannot be called on pixels.
  if constexpr (C == 3 && std::is_invocable_v<decltype(F.Pix), Pixels &>) {
    if (SC == 3 && Shape.Order == Layout::NHWC) {
      thread_local std::vector<PairTap> Pairs;
      thread_local std::vector<SrcT> ZeroRow;
      Pairs.resize((OW + 1) / 2);
      auto setHalf = [](PairTap &P, int H, const Tap2 &T) {
        P.I0[H] = T.I0, P.I1[H] = T.I1;
        for (int I = 0; I < 4; ++I)
          P.W0[4 * H + I] = T.W0, P.W1[4 * H + I] = T.W1;
      };
      for (int X = 0; X < OW; ++X)
        setHalf(Pairs[X / 2], X % 2, Col2[X]);
      if (OW % 2) // An odd last pixel fills both halves of its pair.
        setHalf(Pairs[OW / 2], 1, Col2[OW - 1]);
      for (int Y = 0; Y < OH; ++Y) {
        const Taps &R = Rows[Y];
        const SrcT *S0 = Src + size_t(R.I0) * Stride + Lo;
        const SrcT *S1 = Src + size_t(R.I1) * Stride + Lo;
        if (!R.Valid) {
          // A padding row samples zeros.
          ZeroRow.assign(N, SrcT(0));
          S0 = S1 = ZeroRow.data();
        }
        float *D = Dst + size_t(Y) * OW * 3;
        auto *Row = HaveAvx512 ? rgbRowAvx512<SrcT, Fn>
                    : HaveAvx2 ? rgbRowAvx2<SrcT, Fn>
                               : rgbRowBase<SrcT, Fn>;
        Row(S0, S1, 1.0f - R.Wt, R.Wt, N, L, Pairs.data(), OW, F, D);
      }
      return;
    }
  }
  Out.resize(size_t(C) * OW);
  // A gray source feeding RGB output reads its one channel three times.
  const int CStep = SC == C ? 1 : 0;
  const size_t PlaneSize = size_t(OH) * OW;
  float *O = Out.data();
  for (int Y = 0; Y < OH; ++Y) {
    const Taps &R = Rows[Y];
    if (R.Valid) {
      const SrcT *S0 = Src + size_t(R.I0) * Stride + Lo;
      const SrcT *S1 = Src + size_t(R.I1) * Stride + Lo;
      const float Wy = R.Wt, Wy0 = 1.0f - Wy;
      for (int I = 0; I < N; ++I)
        L[I] = float(S0[I]) * Wy0 + float(S1[I]) * Wy;
      for (int X = 0; X < OW; ++X) {
        const Tap2 &T = Col2[X];
        for (int Ch = 0; Ch < C; ++Ch)
          O[Ch * OW + X] =
              L[T.I0 + Ch * CStep] * T.W0 + L[T.I1 + Ch * CStep] * T.W1;
      }
    } else {
      std::fill(O, O + C * OW, 0.0f);
    }
    F.Row(O, OW);
    if (Shape.Order == Layout::NCHW) {
      for (int Ch = 0; Ch < C; ++Ch)
        std::copy(O + Ch * OW, O + (Ch + 1) * OW,
                  Dst + Ch * PlaneSize + size_t(Y) * OW);
    } else {
      float *D = Dst + size_t(Y) * OW * C;
      for (int X = 0; X < OW; ++X)
        for (int Ch = 0; Ch < C; ++Ch)
          D[X * C + Ch] = O[Ch * OW + X];
    }
  }
}

size_t rowStride(const ImageRef &Img) {
  return Img.RowStride ? Img.RowStride : size_t(Img.Width) * Img.Channels;
}

/// \p Img's pixels inside \p R, without a copy.
ImageRef cropOf(const ImageRef &Img, const PixelRect &R) {
  ImageRef C = Img;
  C.RowStride = rowStride(Img);
  const size_t Offset = size_t(R.Y) * C.RowStride + size_t(R.X) * Img.Channels;
  if (C.U8)
    C.U8 += Offset;
  else
    C.F32 += Offset;
  C.Height = R.Height;
  C.Width = R.Width;
  return C;
}

/// A per-value map: \p G updates a value in place and is generic, so the
/// same expression serves floats and pixels.
template <typename Fn> auto eachValue(int C, Fn G) {
  return makeMap(
      [C, G](float *P, int OW) {
        for (int I = 0; I < C * OW; ++I)
          G(P[I]);
      },
      G);
}

template <typename Fn>
Status run(const ImageRef &Src, const SourceWindow &Win, bool Flip,
           const OutputShape &Shape, const Fn &F, float *Dst) {
  if (Src.Channels != Shape.Channels && Src.Channels != 1)
    return Status::error("cannot turn a " + std::to_string(Src.Channels) +
                         "-channel image into " +
                         std::to_string(Shape.Channels) + " channels");
  const size_t Stride = rowStride(Src);
  auto go = [&](auto CTag) {
    constexpr int C = decltype(CTag)::value;
    if (Src.U8)
      sample<C>(Src.U8, 1.0f, Src.Height, Src.Width, Src.Channels, Stride, Win,
                Flip, Shape, F, Dst);
    else
      sample<C>(Src.F32, Src.FloatScale, Src.Height, Src.Width, Src.Channels,
                Stride, Win, Flip, Shape, F, Dst);
  };
  if (Shape.Channels == 1)
    go(std::integral_constant<int, 1>());
  else if (Shape.Channels == 3)
    go(std::integral_constant<int, 3>());
  else
    return Status::error("output must have 1 or 3 channels");
  return Status::success();
}

/// TensorFlow's sample_distorted_bounding_box with the whole image as the
/// box, as TF-slim's inception preprocessing calls it (min_object_covered
/// 0.1, aspect ratio [3/4, 4/3], area [0.05, 1], 100 attempts, else the
/// whole image).
PixelRect distortedBox(int H, int W, Rng &R) {
  const double Area = double(H) * W;
  for (int Attempt = 0; Attempt < 100; ++Attempt) {
    double Aspect = R.uniform(3.0 / 4.0, 4.0 / 3.0);
    double Target = R.uniform(0.05, 1.0) * Area;
    int Ch = static_cast<int>(std::lround(std::sqrt(Target / Aspect)));
    int Cw = static_cast<int>(std::lround(Ch * Aspect));
    if (Ch < 1 || Cw < 1 || Ch > H || Cw > W)
      continue;
    if (double(Ch) * Cw < 0.1 * Area)
      continue;
    int Y = static_cast<int>(R.below(H - Ch + 1));
    int X = static_cast<int>(R.below(W - Cw + 1));
    return {Y, X, Ch, Cw};
  }
  return {0, 0, H, W};
}

/// _R_MEAN, _G_MEAN, _B_MEAN of vgg_preprocessing.py.
constexpr float VggMean[3] = {123.68f, 116.78f, 103.94f};

/// TF's central_crop: integer start, size what is left.
PixelRect centralCrop(int H, int W, double Fraction) {
  int Y = static_cast<int>((H - H * Fraction) / 2);
  int X = static_cast<int>((W - W * Fraction) / 2);
  return {Y, X, H - 2 * Y, W - 2 * X};
}

/// resize_image_with_crop_or_pad: centred crop where larger, centred zero
/// padding where smaller, no scaling.
SourceWindow cropOrPad(int H, int W, int OH, int OW) {
  double Y = H >= OH ? (H - OH) / 2 : -((OH - H) / 2);
  double X = W >= OW ? (W - OW) / 2 : -((OW - W) / 2);
  return {Y, X, double(OH), double(OW)};
}

/// TF's per_image_standardization over the whole image, in place, plus the
/// cifarnet contrast step (per channel around its mean) when Contrast != 1.
void standardise(float *Dst, const OutputShape &Shape, float Contrast) {
  const size_t Plane = size_t(Shape.Height) * Shape.Width;
  const int C = Shape.Channels;
  auto at = [&](size_t P, int Ch) -> float & {
    return Shape.Order == Layout::NCHW ? Dst[Ch * Plane + P] : Dst[P * C + Ch];
  };
  if (Contrast != 1.0f) {
    for (int Ch = 0; Ch < C; ++Ch) {
      double Sum = 0;
      for (size_t P = 0; P < Plane; ++P)
        Sum += at(P, Ch);
      float Mean = static_cast<float>(Sum / Plane);
      for (size_t P = 0; P < Plane; ++P)
        at(P, Ch) = (at(P, Ch) - Mean) * Contrast + Mean;
    }
  }
  const size_t N = Plane * C;
  double Sum = 0, Sq = 0;
  for (size_t I = 0; I < N; ++I) {
    Sum += Dst[I];
    Sq += double(Dst[I]) * Dst[I];
  }
  double Mean = Sum / N;
  double Var = std::max(0.0, Sq / N - Mean * Mean);
  double Adj = std::max(std::sqrt(Var), 1.0 / std::sqrt(double(N)));
  float M = static_cast<float>(Mean), Inv = static_cast<float>(1.0 / Adj);
  for (size_t I = 0; I < N; ++I)
    Dst[I] = (Dst[I] - M) * Inv;
}

} // namespace

Status planPreprocessing(PreprocessKind Kind, bool Training, int H, int W,
                         const OutputShape &Shape, Rng &R,
                         PreprocessPlan &Plan) {
  if (H <= 0 || W <= 0)
    return Status::error("empty image");
  if (Shape.Height <= 0 || Shape.Width <= 0)
    return Status::error("output size is not set");
  const int OH = Shape.Height, OW = Shape.Width;
  Plan = PreprocessPlan();
  Plan.Kind = Kind;
  Plan.Training = Training;
  Plan.Source = {0, 0, H, W};
  Plan.Win = {0, 0, double(H), double(W)};
  switch (Kind) {
  case PreprocessKind::None:
    break;
  case PreprocessKind::Inception:
    // TF-slim crops the image tensor, then resizes the crop: the sampler
    // sees only the crop and clamps at its edges.
    Plan.Source = Training ? distortedBox(H, W, R) : centralCrop(H, W, 0.875);
    Plan.Win = {0, 0, double(Plan.Source.Height), double(Plan.Source.Width)};
    if (Training) {
      Plan.Flip = R.below(2);
      // distort_color in fast mode, ordering 0: brightness (max delta
      // 32/255) then saturation [0.5, 1.5].
      Plan.Brightness = static_cast<float>(R.uniform(-32.0, 32.0) / 255.0);
      Plan.Saturation = static_cast<float>(R.uniform(0.5, 1.5));
    }
    break;
  case PreprocessKind::Vgg: {
    // Aspect-preserving resize so the smaller side is S (train: uniform in
    // [256, 512]; eval: 256), then a random (train) or central crop.
    int MinOut = std::max(OH, OW);
    int Side = Training ? 256 + static_cast<int>(R.below(512 - 256 + 1)) : 256;
    Side = std::max(Side, MinOut);
    double Scale = double(Side) / std::min(H, W);
    int NH = std::max(OH, static_cast<int>(std::lround(H * Scale)));
    int NW = std::max(OW, static_cast<int>(std::lround(W * Scale)));
    int OffY =
        Training ? static_cast<int>(R.below(NH - OH + 1)) : (NH - OH) / 2;
    int OffX =
        Training ? static_cast<int>(R.below(NW - OW + 1)) : (NW - OW) / 2;
    double Sy = double(H) / NH, Sx = double(W) / NW;
    Plan.Win = {OffY * Sy, OffX * Sx, OH * Sy, OW * Sx};
    Plan.Flip = Training && R.below(2);
    break;
  }
  case PreprocessKind::Cifarnet:
    if (!Training) {
      Plan.Win = cropOrPad(H, W, OH, OW);
      break;
    }
    {
      // Pad 4 pixels of zeros on each side, then a random crop.
      const int Pad = 4;
      int PH = H + 2 * Pad, PW = W + 2 * Pad;
      if (PH >= OH && PW >= OW) {
        int Y = static_cast<int>(R.below(PH - OH + 1));
        int X = static_cast<int>(R.below(PW - OW + 1));
        Plan.Win = {double(Y - Pad), double(X - Pad), double(OH), double(OW)};
      }
    }
    Plan.Flip = R.below(2);
    Plan.Brightness = static_cast<float>(R.uniform(-63.0, 63.0));
    Plan.Contrast = static_cast<float>(R.uniform(0.2, 1.8));
    break;
  case PreprocessKind::Lenet:
    Plan.Win = cropOrPad(H, W, OH, OW);
    break;
  }
  return Status::success();
}

Status applyPreprocessing(const PreprocessPlan &Plan, const ImageRef &Src,
                          const OutputShape &Shape, float *Dst) {
  if (!Src.U8 && !Src.F32)
    return Status::error("empty image");
  if (Src.Height != Plan.Source.Height || Src.Width != Plan.Source.Width)
    return Status::error(
        "a " + std::to_string(Src.Width) + "x" + std::to_string(Src.Height) +
        " image for a plan that reads " + std::to_string(Plan.Source.Width) +
        "x" + std::to_string(Plan.Source.Height) + " pixels");
  const int C = Shape.Channels;
  const SourceWindow &Win = Plan.Win;
  switch (Plan.Kind) {
  case PreprocessKind::None:
    return run(Src, Win, false, Shape,
               eachValue(C, [](auto &V) { V = V * (1.0f / 255.0f); }), Dst);
  case PreprocessKind::Inception: {
    if (!Plan.Training)
      return run(Src, Win, false, Shape,
                 eachValue(C, [](auto &V) { V = V * (2.0f / 255.0f) - 1.0f; }),
                 Dst);
    // Saturation is a lerp from the Rec.601 luma, close to TF's HSV
    // scaling and far cheaper. Then clip to [0, 1] and map to [-1, 1].
    const float Delta = Plan.Brightness, Sat = Plan.Saturation;
    if (C == 3)
      return run(
          Src, Win, Plan.Flip, Shape,
          makeMap(
              [Delta, Sat](float *P, int OW) {
                float *PR = P, *PG = P + OW, *PB = P + 2 * OW;
                for (int X = 0; X < OW; ++X) {
                  float Rr = PR[X] * (1.0f / 255.0f) + Delta;
                  float G = PG[X] * (1.0f / 255.0f) + Delta;
                  float B = PB[X] * (1.0f / 255.0f) + Delta;
                  float Y = 0.299f * Rr + 0.587f * G + 0.114f * B;
                  Rr = std::clamp(Y + (Rr - Y) * Sat, 0.0f, 1.0f);
                  G = std::clamp(Y + (G - Y) * Sat, 0.0f, 1.0f);
                  B = std::clamp(Y + (B - Y) * Sat, 0.0f, 1.0f);
                  PR[X] = Rr * 2.0f - 1.0f;
                  PG[X] = G * 2.0f - 1.0f;
                  PB[X] = B * 2.0f - 1.0f;
                }
              },
              [Delta, Sat](Pixels &V) {
                const Pixels Luma = {0.299f, 0.587f, 0.114f, 0.0f,
                                     0.299f, 0.587f, 0.114f, 0.0f};
                Pixels T = V * (1.0f / 255.0f) + Delta;
                Pixels P = T * Luma;
                // The scalar sum's order, splatted over each pixel.
                Pixels Y =
                    __builtin_shufflevector(P, P, 0, 0, 0, 0, 4, 4, 4, 4) +
                    __builtin_shufflevector(P, P, 1, 1, 1, 1, 5, 5, 5, 5);
                Y += __builtin_shufflevector(P, P, 2, 2, 2, 2, 6, 6, 6, 6);
                Pixels S = Y + (T - Y) * Sat;
                // std::clamp's comparisons, lane-wise.
                S = S < 0.0f ? Pixels{} : S;
                S = 1.0f < S ? Pixels{} + 1.0f : S;
                V = S * 2.0f - 1.0f;
              }),
          Dst);
    return run(Src, Win, Plan.Flip, Shape,
               eachValue(1,
                         [Delta](float &V) {
                           float X = std::clamp(V * (1.0f / 255.0f) + Delta,
                                                0.0f, 1.0f);
                           V = X * 2.0f - 1.0f;
                         }),
               Dst);
  }
  case PreprocessKind::Vgg:
    return run(Src, Win, Plan.Flip, Shape,
               makeMap(
                   [C](float *P, int OW) {
                     for (int Ch = 0; Ch < C; ++Ch)
                       for (int X = 0; X < OW; ++X)
                         P[Ch * OW + X] -= VggMean[Ch];
                   },
                   [](Pixels &V) {
                     V -= Pixels{VggMean[0], VggMean[1], VggMean[2], 0.0f,
                                 VggMean[0], VggMean[1], VggMean[2], 0.0f};
                   }),
               Dst);
  case PreprocessKind::Cifarnet: {
    const float Delta = Plan.Brightness;
    Status S = run(Src, Win, Plan.Flip, Shape,
                   eachValue(C, [Delta](auto &V) { V = V + Delta; }), Dst);
    if (S.ok())
      standardise(Dst, Shape, Plan.Contrast);
    return S;
  }
  case PreprocessKind::Lenet:
    return run(
        Src, Win, false, Shape,
        eachValue(C, [](auto &V) { V = (V - 128.0f) * (1.0f / 128.0f); }), Dst);
  }
  return Status::error("unknown preprocessing");
}

Status preprocessImage(PreprocessKind Kind, bool Training, const ImageRef &Src,
                       const OutputShape &Shape, Rng &R, float *Dst) {
  if (!Src.U8 && !Src.F32)
    return Status::error("empty image");
  PreprocessPlan Plan;
  if (Status S = planPreprocessing(Kind, Training, Src.Height, Src.Width, Shape,
                                   R, Plan);
      !S.ok())
    return S;
  return applyPreprocessing(Plan, cropOf(Src, Plan.Source), Shape, Dst);
}

} // namespace fastnn::data
