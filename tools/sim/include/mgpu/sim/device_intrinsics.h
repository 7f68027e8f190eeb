// The CUDA math functions and intrinsics students use that the C library lacks, and the
// device clock and trap. sqrtf, expf,
// fminf, fmaf, ... come from <cmath> unchanged. The fast intrinsics (__expf, __fdividef, ...)
// return the exact results here, which the CUDA documentation allows for them as upper bounds
// of their error.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// min and max for integers and floating point, as CUDA's math headers declare them.
#define MGPU_MIN_MAX_(type)                                   \
    inline type min(type a, type b) { return b < a ? b : a; } \
    inline type max(type a, type b) { return a < b ? b : a; }
MGPU_MIN_MAX_(int)
MGPU_MIN_MAX_(unsigned int)
MGPU_MIN_MAX_(long)
MGPU_MIN_MAX_(unsigned long)
MGPU_MIN_MAX_(long long)
MGPU_MIN_MAX_(unsigned long long)
#undef MGPU_MIN_MAX_
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }

// Mixed argument types (an int and an unsigned, a float and a double) use the usual arithmetic
// conversions, as CUDA's mixed overloads do.
template <class A, class B>
    requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>)
inline std::common_type_t<A, B> min(A a, B b) {
    return min(static_cast<std::common_type_t<A, B>>(a), static_cast<std::common_type_t<A, B>>(b));
}
template <class A, class B>
    requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && !std::is_same_v<A, B>)
inline std::common_type_t<A, B> max(A a, B b) {
    return max(static_cast<std::common_type_t<A, B>>(a), static_cast<std::common_type_t<A, B>>(b));
}

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline float fdividef(float x, float y) { return x / y; }
inline float __fdividef(float x, float y) { return x / y; }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline void __sincosf(float x, float* s, float* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float norm3df(float a, float b, float c) { return std::sqrt(a * a + b * b + c * c); }
inline double norm3d(double a, double b, double c) { return std::sqrt(a * a + b * b + c * c); }

inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(std::ceil(x)); }
inline unsigned __float2uint_rn(float x) { return static_cast<unsigned>(std::nearbyint(x)); }
inline unsigned __float2uint_rz(float x) { return static_cast<unsigned>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(std::nearbyint(x)); }

template <class To, class From>
inline To mgpu_bit_cast_(From from) {
    static_assert(sizeof(To) == sizeof(From));
    To to;
    std::memcpy(&to, &from, sizeof(To));
    return to;
}
inline int __float_as_int(float x) { return mgpu_bit_cast_<int>(x); }
inline unsigned __float_as_uint(float x) { return mgpu_bit_cast_<unsigned>(x); }
inline float __int_as_float(int x) { return mgpu_bit_cast_<float>(x); }
inline float __uint_as_float(unsigned x) { return mgpu_bit_cast_<float>(x); }
inline long long __double_as_longlong(double x) { return mgpu_bit_cast_<long long>(x); }
inline double __longlong_as_double(long long x) { return mgpu_bit_cast_<double>(x); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1u);
    return r;
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) {
    return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}

// Reads through the read-only data cache on a GPU; an ordinary load here.
template <class T>
inline T __ldg(const T* address) {
    return *address;
}

// The device clock: nanoseconds of the host's monotonic clock.
long long clock64();

// Ends the grid with cudaErrorLaunchFailure, as a trap instruction does on a GPU.
[[noreturn]] void __trap();
