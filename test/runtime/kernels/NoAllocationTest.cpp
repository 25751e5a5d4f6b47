//===- NoAllocationTest.cpp - *_forward does not allocate -----------------===//
//
// This binary replaces malloc and operator new with counting versions (glibc
// exports the real allocator as __libc_malloc and friends), so that a
// forward call can be checked to make no heap allocation at all, in our code
// or in oneDNN's.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <new>

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}

namespace {
std::atomic<bool> Counting{false};
std::atomic<long> Allocations{0};
std::atomic<size_t> Largest{0};
void note(size_t N) {
  if (Counting.load(std::memory_order_relaxed)) {
    Allocations.fetch_add(1, std::memory_order_relaxed);
    size_t L = Largest.load();
    while (N > L && !Largest.compare_exchange_weak(L, N))
      ;
  }
}
} // namespace

extern "C" {
void *malloc(size_t N) {
  note(N);
  return __libc_malloc(N);
}
void *calloc(size_t N, size_t S) {
  note(N * S);
  return __libc_calloc(N, S);
}
void *realloc(void *P, size_t N) {
  note(N);
  return __libc_realloc(P, N);
}
void free(void *P) { __libc_free(P); }
int posix_memalign(void **Out, size_t Align, size_t N) {
  note(N);
  *Out = __libc_memalign(Align, N);
  return *Out ? 0 : 12; // ENOMEM
}
void *aligned_alloc(size_t Align, size_t N) {
  note(N);
  return __libc_memalign(Align, N);
}
void *memalign(size_t Align, size_t N) {
  note(N);
  return __libc_memalign(Align, N);
}
}

using namespace fastnn::test;

namespace {

/// oneDNN 2.6's dnnl_primitive_execute builds a std::unordered_map of the
/// arguments on every call (a few nodes of 24-136 bytes); nothing else may
/// allocate. Returns the largest allocation during \p Forward (0 if none),
/// after a first call that may warm up OpenMP's thread pool.
constexpr size_t BookkeepingBytes = 256;

template <typename Fn> size_t largestAllocationDuring(Fn Forward) {
  Forward();
  Allocations = 0;
  Largest = 0;
  Counting = true;
  for (int I = 0; I < 3; ++I)
    Forward();
  Counting = false;
  return Largest;
}

// NHWC: with plain NCHW oneDNN 2.6 picks its gemm-based convolution, whose
// sgemm mallocs a packing buffer on every call; the direct/brgemm
// implementations that NHWC (and the blocked layouts) select do not.
TEST_F(KernelTest, ConvForwardDoesNotAllocate) {
  fnn_conv2d_desc D{};
  D.input = shape({2, 14, 14, 16});
  D.filter = shape({32, 3, 3, 16});
  D.output = shape({2, 14, 14, 32});
  D.dtype = FNN_F32;
  D.layout = FNN_NHWC;
  D.has_bias = 1;
  D.post_op = FNN_POST_RELU;
  D.groups = 1;
  D.strides[0] = D.strides[1] = 1;
  D.dilations[0] = D.dilations[1] = 1;
  for (int64_t &P : D.pads)
    P = 1;
  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     F = randomData(numElements(D.filter), 2),
                     B = randomData(32, 3), Y(numElements(D.output));
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_conv2d_forward(K.get(), X.data(), F.data(), B.data(),
                                 Y.data());
            }),
            BookkeepingBytes);
}

// NCHW: the kernel reorders into and out of nChw16c and reorders the filter
// on every call, into buffers made at create time.
TEST_F(KernelTest, BlockedConvForwardDoesNotAllocate) {
  fnn_conv2d_desc D{};
  D.input = shape({2, 32, 14, 14});
  D.filter = shape({48, 32, 3, 3});
  D.output = shape({2, 48, 14, 14});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.has_bias = 1;
  D.post_op = FNN_POST_RELU;
  D.groups = 1;
  D.strides[0] = D.strides[1] = 1;
  D.dilations[0] = D.dilations[1] = 1;
  for (int64_t &P : D.pads)
    P = 1;
  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     F = randomData(numElements(D.filter), 2),
                     B = randomData(48, 3), Y(numElements(D.output));
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_conv2d_forward(K.get(), X.data(), F.data(), B.data(),
                                 Y.data());
            }),
            BookkeepingBytes);
}

// An inverted residual chain whose intermediate (9.4 MiB) oneDNN fuses into
// one kernel, on nChw16c activations reordered from and to NHWC, the
// projection reading the depthwise output in the scratch and accumulating
// into its output, with constant filters prepared on the first call.
TEST_F(KernelTest, ConvChainForwardDoesNotAllocate) {
  fnn_conv2d_chain_desc D{};
  D.count = 3;
  fnn_conv2d_desc &P = D.convs[0], &W = D.convs[1], &R = D.convs[2];
  P.input = shape({2, 96, 96, 16});
  P.filter = shape({128, 1, 1, 16});
  P.output = shape({2, 96, 96, 128});
  P.dtype = FNN_F32;
  P.layout = FNN_NHWC;
  P.has_bias = 1;
  P.post_op = FNN_POST_RELU6;
  P.groups = 1;
  P.strides[0] = P.strides[1] = 1;
  P.dilations[0] = P.dilations[1] = 1;
  P.constant_filter = 1;
  W = P;
  W.input = P.output;
  W.filter = shape({128, 3, 3, 1});
  W.output = shape({2, 48, 48, 128});
  W.groups = 128;
  W.strides[0] = W.strides[1] = 2;
  for (int64_t &Pad : W.pads)
    Pad = 1;
  R = P;
  R.input = W.output;
  R.filter = shape({24, 1, 1, 128});
  R.output = shape({2, 48, 48, 24});
  R.post_op = FNN_POST_ACCUMULATE;
  KernelPtr K(fnn_conv2d_chain_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(P.input), 1),
                     F = randomData(numElements(P.filter), 2),
                     B = randomData(128, 3), G = randomData(128 * 9, 4),
                     C = randomData(128, 5), H = randomData(24 * 128, 6),
                     E = randomData(24, 7), Mid(numElements(P.output)),
                     Dw(numElements(W.output)), Y(numElements(R.output));
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_conv2d_chain_forward(K.get(), X.data(), F.data(), B.data(),
                                       Mid.data(), G.data(), C.data(),
                                       Dw.data(), H.data(), E.data(), Y.data());
            }),
            BookkeepingBytes);
}

TEST_F(KernelTest, BatchNormForwardDoesNotAllocate) {
  fnn_batch_norm_desc D{};
  D.input = shape({2, 32, 14, 14});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.post_op = FNN_POST_RELU;
  D.epsilon = 1e-5;
  KernelPtr K(fnn_batch_norm_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     Stats = randomData(32, 2, 0.5f, 1.f),
                     Y(numElements(D.input));
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_batch_norm_forward(K.get(), X.data(), Stats.data(),
                                     Stats.data(), Stats.data(), Stats.data(),
                                     Y.data());
            }),
            BookkeepingBytes);
}

// oneDNN 2.6 has its brgemm matmul from AVX-512 on; before that (AVX2) its
// matmul is the sgemm driver, which mallocs packing buffers on every call and
// takes no scratchpad, so there is nothing the kernel could hand it.
bool cpuHasBrgemmMatmul() {
  auto Isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto Avx512Core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (Isa & Avx512Core) == Avx512Core;
}

TEST_F(KernelTest, MatmulForwardDoesNotAllocate) {
  if (!cpuHasBrgemmMatmul())
    GTEST_SKIP() << "this CPU has no AVX-512: oneDNN 2.6's matmul here is its "
                    "sgemm, which allocates its packing buffers per call";
  fnn_matmul_desc D{};
  D.a = shape({64, 128});
  D.b = shape({10, 128});
  D.output = shape({64, 10});
  D.dtype = FNN_F32;
  D.transpose_b = 1;
  D.has_bias = 1;
  KernelPtr K(fnn_matmul_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> A = randomData(64 * 128, 1), B = randomData(1280, 2),
                     Bias = randomData(10, 3), Y(640);
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_matmul_forward(K.get(), A.data(), B.data(), Bias.data(),
                                 Y.data());
            }),
            BookkeepingBytes);
}

TEST_F(KernelTest, PoolForwardDoesNotAllocate) {
  fnn_pool2d_desc D =
      poolDesc(FNN_POOL_MAX, shape({2, 8, 12, 12}), shape({2, 8, 6, 6}), 2, 2);
  KernelPtr K(fnn_pool2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     Y(numElements(D.output));
  EXPECT_LE(largestAllocationDuring(
                [&] { fnn_pool2d_forward(K.get(), X.data(), Y.data()); }),
            BookkeepingBytes);
}

} // namespace

// The training kernels: forward and backward, with NULL gradients (which go
// to spare buffers made at create). NHWC runs the hand-written kernels
// (shapes large enough for both threads), NCHW oneDNN's.
TEST_F(KernelTest, PoolTrainingDoesNotAllocate) {
  for (int64_t Kind : {FNN_POOL_MAX, FNN_POOL_AVG})
    for (int64_t Layout : {FNN_NCHW, FNN_NHWC}) {
      SCOPED_TRACE("kind " + std::to_string(Kind) + ", layout " +
                   std::to_string(Layout));
      bool Nhwc = Layout == FNN_NHWC;
      fnn_pool2d_desc D =
          poolDesc(Kind, Nhwc ? shape({4, 32, 32, 16}) : shape({2, 8, 12, 12}),
                   Nhwc ? shape({4, 16, 16, 16}) : shape({2, 8, 6, 6}), 3, 2);
      D.layout = Layout;
      D.pads[2] = D.pads[3] = 1;
      KernelPtr Fw(fnn_pool2d_train_create(Device, &D));
      ASSERT_NE(Fw, nullptr) << fnn_last_error();
      KernelPtr Bw(fnn_pool2d_backward_create(Device, &D, Fw.get()));
      ASSERT_NE(Bw, nullptr) << fnn_last_error();
      std::vector<float> X = randomData(numElements(D.input), 1),
                         Y(numElements(D.output)), Dx(X.size());
      EXPECT_LE(largestAllocationDuring([&] {
                  fnn_pool2d_forward(Fw.get(), X.data(), Y.data());
                  fnn_pool2d_backward(Bw.get(), Y.data(), Dx.data());
                }),
                BookkeepingBytes);
    }
}

TEST_F(KernelTest, BatchNormTrainingDoesNotAllocate) {
  fnn_batch_norm_desc D{};
  D.input = shape({2, 14, 14, 32});
  D.dtype = FNN_F32;
  D.layout = FNN_NHWC;
  D.epsilon = 1e-5;
  KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
  ASSERT_NE(Fw, nullptr) << fnn_last_error();
  KernelPtr Bw(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_NE(Bw, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     Param = randomData(32, 2, 0.5f, 1.f), Mean(32), Var(32),
                     Y(X.size()), Dx(X.size());
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_batch_norm_train_forward(Fw.get(), X.data(), Param.data(),
                                           Param.data(), nullptr, Y.data(),
                                           Mean.data(), Var.data());
              fnn_batch_norm_backward(Bw.get(), X.data(), Param.data(),
                                      Mean.data(), Var.data(), Y.data(),
                                      Dx.data(), nullptr, nullptr);
            }),
            BookkeepingBytes);
}

TEST_F(KernelTest, LrnTrainingDoesNotAllocate) {
  fnn_lrn_desc D{};
  D.input = shape({2, 14, 14, 32});
  D.dtype = FNN_F32;
  D.layout = FNN_NHWC;
  D.size = 5;
  D.alpha = 1e-4;
  D.beta = 0.75;
  D.bias = 1;
  KernelPtr Fw(fnn_lrn_train_create(Device, &D));
  ASSERT_NE(Fw, nullptr) << fnn_last_error();
  KernelPtr Bw(fnn_lrn_backward_create(Device, &D, Fw.get()));
  ASSERT_NE(Bw, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1), Y(X.size()),
                     Dx(X.size());
  EXPECT_LE(largestAllocationDuring([&] {
              fnn_lrn_forward(Fw.get(), X.data(), Y.data());
              fnn_lrn_backward(Bw.get(), X.data(), Y.data(), Dx.data());
            }),
            BookkeepingBytes);
}

TEST_F(KernelTest, HandWrittenLrnDoesNotAllocate) {
  // Size 9 has no oneDNN jit kernel: the hand-written loops run, forward
  // and backward, on NCHW (cifarnet's LRN) and NHWC.
  for (int64_t Layout : {int64_t(FNN_NCHW), int64_t(FNN_NHWC)}) {
    fnn_lrn_desc D{};
    D.input = Layout == FNN_NCHW ? shape({2, 20, 9, 9}) : shape({2, 9, 9, 20});
    D.dtype = FNN_F32;
    D.layout = Layout;
    D.size = 9;
    D.alpha = 1e-3 / 9;
    D.beta = 0.75;
    D.bias = 1;
    KernelPtr Inference(fnn_lrn_create(Device, &D));
    ASSERT_NE(Inference, nullptr) << fnn_last_error();
    KernelPtr Fw(fnn_lrn_train_create(Device, &D));
    ASSERT_NE(Fw, nullptr) << fnn_last_error();
    KernelPtr Bw(fnn_lrn_backward_create(Device, &D, Fw.get()));
    ASSERT_NE(Bw, nullptr) << fnn_last_error();
    std::vector<float> X = randomData(numElements(D.input), 2), Y(X.size()),
                       Dx(X.size());
    EXPECT_LE(largestAllocationDuring([&] {
                fnn_lrn_forward(Inference.get(), X.data(), Y.data());
                fnn_lrn_forward(Fw.get(), X.data(), Y.data());
                fnn_lrn_backward(Bw.get(), X.data(), Y.data(), Dx.data());
              }),
              BookkeepingBytes);
  }
}

TEST_F(KernelTest, ParallelForDoesNotAllocate) {
  // A generated loop nest's call, large enough to wake the team.
  std::vector<float> Data(1 << 16, 1.f);
  auto Scale = [](void *Context, int64_t Begin, int64_t End) {
    float *Values = static_cast<float *>(Context);
    for (int64_t I = Begin; I < End; ++I)
      Values[I] *= 0.5f;
  };
  EXPECT_EQ(largestAllocationDuring([&] {
              fnn_parallel_for(Scale, Data.data(),
                               static_cast<int64_t>(Data.size()),
                               int64_t(1) << 20);
            }),
            0u);
}

TEST_F(KernelTest, BlockedReductionDoesNotAllocate) {
  // A full reduction (an L2 term's sum of squares) of several chunks, large
  // enough to run on the team.
  fnn_reduce_desc D{};
  D.input = shape({256, 64, 3, 3});
  D.output = shape({1, 1, 1, 1});
  D.dtype = FNN_F32;
  D.kind = FNN_REDUCE_SUM;
  KernelPtr K(fnn_reduce_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 3);
  float Y = 0;
  EXPECT_EQ(largestAllocationDuring(
                [&] { fnn_reduce_forward(K.get(), X.data(), &Y); }),
            0u);
}
