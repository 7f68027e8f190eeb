#include <chrono>
#include <cstdio>
#include <vector>
__global__ void scale_add(const float* x, float* y, float a, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = a * x[i] + y[i];
}
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
[[gnu::noinline]] void plain(const float* x, float* y, float a, int n) { for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i]; }
double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  int n = 1 << 24; std::vector<float> x(n, 1.f), y(n, 2.f);
  for (int r = 0; r < 4; ++r) {
    double t = now(); scale_add<<<n / 256, 256>>>(x.data(), y.data(), 2.f, n); double s = now() - t;
    t = now(); plain(x.data(), y.data(), 2.f, n); double p = now() - t;
    printf("sim %.2f ms plain %.2f ms\n", s, p);
  }
  int m = 1 << 22; std::vector<float> out(m / 256);
  for (int r = 0; r < 3; ++r) {
    double t = now(); block_sum<<<m / 256, 256>>>(x.data(), out.data()); double s = now() - t;
    printf("reduce %.2f ms = %.2f ns/thread/barrier\n", s, s * 1e6 / (m * 9.0));
  }
}
