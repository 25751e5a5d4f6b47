//===- OptimizerMathTest.cpp - CUDA optimizers' math against the CPU ------===//
//
// The CUDA optimizer kernels run OptimizerMath.h per element; here the same
// functions run on the host, driven as Optimizers.cu drives them (the apply
// flag, the once-per-update Adam step size, then every element), and are
// compared bit for bit with the CPU kernels (fastnn_runtime_cpu) on the same
// inputs over several updates. Both compute in float32 in the same order
// (the .cu files are built without FMA contraction), so any difference is
// a bug in one of them.
//
//===----------------------------------------------------------------------===//

#include "../KernelTestUtil.h"

#include "OptimizerMath.h"

#include <cstring>
#include <string>

using namespace fastnn::test;
using namespace fastnn::cuda;

namespace {

struct Case {
  std::string Name;
  fnn_optimizer_desc Desc;
  float Slot0Init, Slot1Init;
};

fnn_optimizer_desc optimizer(int64_t Kind) {
  fnn_optimizer_desc D{};
  D.kind = Kind;
  D.dtype = FNN_F32;
  D.num_elements = 257;
  D.momentum = 0.9;
  D.rho = 0.95;
  D.beta1 = 0.9;
  D.beta2 = 0.999;
  D.epsilon = 1e-7;
  D.decay = 0.9;
  D.initial_accumulator_value = 0.1;
  D.learning_rate_power = -0.5;
  D.l1 = 0.01;
  D.l2 = 0.02;
  D.weight_decay_rate = 0.01;
  return D;
}

std::vector<Case> cases() {
  std::vector<Case> C = {
      {"sgd", optimizer(FNN_OPT_SGD), 0, 0},
      {"momentum", optimizer(FNN_OPT_MOMENTUM), 0, 0},
      {"nesterov", optimizer(FNN_OPT_MOMENTUM), 0, 0},
      {"rmsprop", optimizer(FNN_OPT_RMSPROP), 1, 0},
      {"adam", optimizer(FNN_OPT_ADAM), 0, 0},
      {"adagrad", optimizer(FNN_OPT_ADAGRAD), 0.1f, 0},
      {"adadelta", optimizer(FNN_OPT_ADADELTA), 0, 0},
      {"ftrl", optimizer(FNN_OPT_FTRL), 0.1f, 0},
      {"ftrl_power", optimizer(FNN_OPT_FTRL), 0.1f, 0},
      {"adamw", optimizer(FNN_OPT_ADAMW), 0, 0},
  };
  C[2].Desc.use_nesterov = 1;
  C[8].Desc.learning_rate_power = -0.7;
  return C;
}

uint32_t bits(float X) {
  uint32_t B;
  std::memcpy(&B, &X, 4);
  return B;
}

void expectSameBits(const std::vector<float> &Cuda,
                    const std::vector<float> &Cpu, const std::string &What) {
  ASSERT_EQ(Cuda.size(), Cpu.size());
  size_t Bad = 0;
  for (size_t I = 0; I < Cuda.size(); ++I)
    if (bits(Cuda[I]) != bits(Cpu[I]) && Bad++ < 3)
      ADD_FAILURE() << What << " element " << I << ": CUDA math " << Cuda[I]
                    << ", CPU kernel " << Cpu[I];
  EXPECT_EQ(Bad, 0u) << What;
}

/// One update as the CUDA kernels make it, on the host.
void cudaUpdate(const OptimizerHyperparameters &H, OptimizerState &State,
                std::vector<float> &Var, const std::vector<float> &G,
                std::vector<float> &S0, std::vector<float> &S1, float Lr,
                int64_t Step, const unsigned char *Apply) {
  if (!optimizerApplies(Apply))
    return;
  beginOptimizerUpdate(H, State, Lr, Step);
  for (int64_t I = 0; I < H.NumElements; ++I)
    optimizerUpdate(H, I, Var.data(), G[I], S0.data(), S1.data(), Lr,
                    State.AdamAlpha);
}

void PrintTo(const Case &C, std::ostream *OS) { *OS << C.Name; }

class OptimizerMath : public KernelTest,
                      public ::testing::WithParamInterface<Case> {};

TEST_P(OptimizerMath, MatchesTheCpuKernelBitForBit) {
  const Case &C = GetParam();
  const int64_t N = C.Desc.num_elements;
  KernelPtr Cpu(fnn_optimizer_create(Device, &C.Desc));
  ASSERT_NE(Cpu, nullptr) << fnn_last_error();
  OptimizerHyperparameters H = optimizerHyperparameters(C.Desc);
  OptimizerState State{{0, 1.f, 1.f}, 0.f};

  std::vector<float> VarCpu = randomData(N, 1), VarCuda = VarCpu;
  std::vector<float> S0Cpu(N, C.Slot0Init), S0Cuda = S0Cpu;
  std::vector<float> S1Cpu(N, C.Slot1Init), S1Cuda = S1Cpu;
  // Steps 1-4, a skipped update, then a restart at step 2 (Adam's powers
  // are recomputed), with a learning rate that changes.
  const int64_t Steps[] = {1, 2, 3, 4, 5, 2};
  const unsigned char Flags[] = {1, 1, 1, 1, 0, 1};
  for (int I = 0; I < 6; ++I) {
    std::vector<float> G = randomData(N, 100 + I);
    float Lr = 0.01f * static_cast<float>(I + 1);
    int64_t Step = Steps[I];
    fnn_optimizer_apply_if(Cpu.get(), VarCpu.data(), G.data(), S0Cpu.data(),
                           S1Cpu.data(), &Lr, &Step, &Flags[I]);
    ASSERT_STREQ(fnn_last_error(), "");
    cudaUpdate(H, State, VarCuda, G, S0Cuda, S1Cuda, Lr, Step, &Flags[I]);
    std::string At = C.Name + " update " + std::to_string(I);
    expectSameBits(VarCuda, VarCpu, At + " param");
    expectSameBits(S0Cuda, S0Cpu, At + " slot0");
    expectSameBits(S1Cuda, S1Cpu, At + " slot1");
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, OptimizerMath, ::testing::ValuesIn(cases()),
                         [](const auto &Info) { return Info.param.Name; });

TEST(OptimizerMathFlag, ASkippedUpdateLeavesEverything) {
  fnn_optimizer_desc D = optimizer(FNN_OPT_ADAM);
  OptimizerHyperparameters H = optimizerHyperparameters(D);
  OptimizerState State{{0, 1.f, 1.f}, 0.f};
  std::vector<float> Var = randomData(D.num_elements, 3), G = Var;
  std::vector<float> S0(D.num_elements, 0), S1(D.num_elements, 0);
  std::vector<float> Before = Var;
  const unsigned char Skip = 0;
  cudaUpdate(H, State, Var, G, S0, S1, 0.1f, 1, &Skip);
  EXPECT_EQ(Var, Before);
  EXPECT_EQ(State.Powers.Step, 0);
  cudaUpdate(H, State, Var, G, S0, S1, 0.1f, 1, nullptr);
  EXPECT_NE(Var, Before);
  EXPECT_EQ(State.Powers.Step, 1);
}

} // namespace
