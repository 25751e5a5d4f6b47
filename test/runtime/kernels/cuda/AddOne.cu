// A one-kernel device image for the fnn_gpu_* tests, built as an sm_90
// fatbin (machine code and PTX), as the compiler embeds its loop nests.
extern "C" __global__ void add_one(float *X, long long N) {
  long long I = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (I < N)
    X[I] += 1.0f;
}
