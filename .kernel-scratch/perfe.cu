#include <cstdio>
#include <ctime>
#include <vector>
#include <algorithm>
__global__ void scale_add(const float* x, float* y, float a, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = a * x[i] + y[i];
}
[[gnu::noinline]] void plain(const float* x, float* y, float a, int n) { for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i]; }
double cpu_ms() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main() {
  int n = 1 << 24; std::vector<float> x(n, 1.f), y(n, 2.f);
  double s = 1e9, p = 1e9;
  for (int r = 0; r < 8; ++r) {
    double t = cpu_ms(); scale_add<<<n / 256, 256>>>(x.data(), y.data(), 2.f, n); s = std::min(s, cpu_ms() - t);
    t = cpu_ms(); plain(x.data(), y.data(), 2.f, n); p = std::min(p, cpu_ms() - t);
  }
  printf("sim %.2f ms plain %.2f ms ratio %.2f\n", s, p, p / s);
}
