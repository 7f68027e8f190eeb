#include <cstdio>
#include <ctime>
#include <vector>
double cpu_ms() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__global__ void only_barriers() { for (int k = 0; k < 9; ++k) __syncthreads(); }
__global__ void block_sum(const float* in, float* out) {
    __shared__ float partial[256];
    const unsigned t = threadIdx.x;
    partial[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
int main() {
  const int m = 1 << 22; std::vector<float> x(m, 1.f), out(m / 256);
  for (int r = 0; r < 3; ++r) {
    double t = cpu_ms(); only_barriers<<<m / 256, 256>>>(); double s = cpu_ms() - t;
    double t2 = cpu_ms(); block_sum<<<m / 256, 256>>>(x.data(), out.data()); double s2 = cpu_ms() - t2;
    printf("only barriers %.1f ns, reduction %.1f ns per thread per barrier (cpu time)\n", s * 1e6 / (m * 9.0), s2 * 1e6 / (m * 9.0));
  }
}
