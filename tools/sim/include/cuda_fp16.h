// CUDA's cuda_fp16.h: the IEEE binary16 types __half and __half2, their conversions, operators
// and intrinsics, for host and device code alike (both are host code here).
//
// Every operation widens to float, computes there and rounds the result back to nearest even,
// which gives exactly the GPU's results: float's 24-bit significand is more than twice half's 11
// plus 2, so rounding an exact sum, difference, product, quotient or square root first to float
// and then to half never differs from rounding it once. Fused multiply-adds are computed in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "mgpu/sim/float_formats.h"
#include "mgpu/sim/reduced_float_common.h"
#include "vector_types.h"

struct __half_raw {
    unsigned short x;
};

struct __half2_raw {
    unsigned short x;
    unsigned short y;
};

struct __half {
protected:
    unsigned short __x;

public:
    __half() = default;
    constexpr __half(const __half_raw& raw) : __x(raw.x) {}
    __half(float value) : __x(::mgpu::sim::formats::float_to_half(value)) {}
    __half(double value) : __x(::mgpu::sim::formats::double_to_half(value)) {}
    __half(int value) : __half(static_cast<float>(value)) {}
    __half(unsigned int value) : __half(static_cast<float>(value)) {}
    __half(short value) : __half(static_cast<float>(value)) {}
    __half(unsigned short value) : __half(static_cast<float>(value)) {}
    __half(long long value) : __half(static_cast<float>(value)) {}
    __half(unsigned long long value) : __half(static_cast<float>(value)) {}

    __half& operator=(const __half_raw& raw) {
        __x = raw.x;
        return *this;
    }
    __half& operator=(float value) { return *this = __half(value); }
    __half& operator=(double value) { return *this = __half(value); }

    constexpr operator __half_raw() const { return __half_raw{__x}; }
    operator float() const { return ::mgpu::sim::formats::half_to_float(__x); }
    explicit operator int() const { return static_cast<int>(float(*this)); }
    explicit operator unsigned int() const { return static_cast<unsigned int>(float(*this)); }
    explicit operator short() const { return static_cast<short>(float(*this)); }
    explicit operator long long() const { return static_cast<long long>(float(*this)); }
    explicit operator bool() const { return (__x & 0x7FFFu) != 0; }
};

struct __half2 {
    __half x;
    __half y;

    __half2() = default;
    constexpr __half2(const __half& low, const __half& high) : x(low), y(high) {}
    constexpr __half2(const __half2_raw& raw) : x(__half_raw{raw.x}), y(__half_raw{raw.y}) {}
    __half2& operator=(const __half2_raw& raw) {
        x = __half_raw{raw.x};
        y = __half_raw{raw.y};
        return *this;
    }
    constexpr operator __half2_raw() const {
        return __half2_raw{static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x};
    }
};

typedef __half half;
typedef __half2 half2;

#define CUDART_INF_FP16 (__ushort_as_half(static_cast<unsigned short>(0x7C00U)))
#define CUDART_NAN_FP16 (__ushort_as_half(static_cast<unsigned short>(0x7FFFU)))
#define CUDART_MAX_NORMAL_FP16 (__ushort_as_half(static_cast<unsigned short>(0x7BFFU)))
#define CUDART_ONE_FP16 (__ushort_as_half(static_cast<unsigned short>(0x3C00U)))
#define CUDART_ZERO_FP16 (__ushort_as_half(static_cast<unsigned short>(0x0000U)))

// Bits and conversions.
inline unsigned short __half_as_ushort(__half h) { return static_cast<__half_raw>(h).x; }
inline short __half_as_short(__half h) { return static_cast<short>(static_cast<__half_raw>(h).x); }
inline __half __ushort_as_half(unsigned short bits) { return __half(__half_raw{bits}); }
inline __half __short_as_half(short bits) { return __half(__half_raw{static_cast<unsigned short>(bits)}); }

namespace mgpu::sim::fp16 {
inline __half rounded(float value, formats::Rounding rounding) {
    return __ushort_as_half(formats::float_to_half(value, rounding));
}
}  // namespace mgpu::sim::fp16

inline float __half2float(__half h) { return ::mgpu::sim::formats::half_to_float(__half_as_ushort(h)); }
inline __half __float2half(float value) { return __half(value); }
inline __half __float2half_rn(float value) { return __half(value); }
inline __half __float2half_rz(float value) {
    return ::mgpu::sim::fp16::rounded(value, ::mgpu::sim::formats::Rounding::TowardZero);
}
inline __half __float2half_rd(float value) {
    return ::mgpu::sim::fp16::rounded(value, ::mgpu::sim::formats::Rounding::Down);
}
inline __half __float2half_ru(float value) {
    return ::mgpu::sim::fp16::rounded(value, ::mgpu::sim::formats::Rounding::Up);
}
inline __half __double2half(double value) { return __half(value); }
inline __half __int2half_rn(int value) { return __half(static_cast<float>(value)); }
inline __half __uint2half_rn(unsigned int value) { return __half(static_cast<float>(value)); }
inline __half __short2half_rn(short value) { return __half(static_cast<float>(value)); }
inline __half __ushort2half_rn(unsigned short value) { return __half(static_cast<float>(value)); }
inline __half __ll2half_rn(long long value) { return __half(static_cast<float>(value)); }
// To integers: NaN gives 0, values beyond the range the nearest limit, as the GPU's cvt does.
namespace mgpu::sim::fp16 {
template <class Integer>
Integer to_integer(float value) {
    if (std::isnan(value)) return 0;
    if (value <= static_cast<float>(std::numeric_limits<Integer>::min())) return std::numeric_limits<Integer>::min();
    if (value >= static_cast<float>(std::numeric_limits<Integer>::max())) return std::numeric_limits<Integer>::max();
    return static_cast<Integer>(value);
}
}  // namespace mgpu::sim::fp16
inline int __half2int_rz(__half h) { return ::mgpu::sim::fp16::to_integer<int>(std::trunc(__half2float(h))); }
inline int __half2int_rn(__half h) { return ::mgpu::sim::fp16::to_integer<int>(std::nearbyint(__half2float(h))); }
inline int __half2int_rd(__half h) { return ::mgpu::sim::fp16::to_integer<int>(std::floor(__half2float(h))); }
inline int __half2int_ru(__half h) { return ::mgpu::sim::fp16::to_integer<int>(std::ceil(__half2float(h))); }
inline unsigned int __half2uint_rz(__half h) {
    return ::mgpu::sim::fp16::to_integer<unsigned int>(std::trunc(__half2float(h)));
}
inline unsigned int __half2uint_rn(__half h) {
    return ::mgpu::sim::fp16::to_integer<unsigned int>(std::nearbyint(__half2float(h)));
}
inline short __half2short_rz(__half h) { return ::mgpu::sim::fp16::to_integer<short>(std::trunc(__half2float(h))); }
inline short __half2short_rn(__half h) { return ::mgpu::sim::fp16::to_integer<short>(std::nearbyint(__half2float(h))); }
inline long long __half2ll_rz(__half h) {
    return ::mgpu::sim::fp16::to_integer<long long>(std::trunc(__half2float(h)));
}

// Pairs.
inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __halves2half2(__half low, __half high) { return __half2(low, high); }
inline __half2 __half2half2(__half value) { return __half2(value, value); }
inline __half2 __float2half2_rn(float value) { return __half2(__half(value), __half(value)); }
inline __half2 __floats2half2_rn(float low, float high) { return __half2(__half(low), __half(high)); }
inline __half2 __float22half2_rn(float2 value) { return __half2(__half(value.x), __half(value.y)); }
inline float2 __half22float2(__half2 value) { return float2{__half2float(value.x), __half2float(value.y)}; }
inline float __low2float(__half2 value) { return __half2float(value.x); }
inline float __high2float(__half2 value) { return __half2float(value.y); }
inline __half __low2half(__half2 value) { return value.x; }
inline __half __high2half(__half2 value) { return value.y; }
inline __half2 __low2half2(__half2 value) { return __half2(value.x, value.x); }
inline __half2 __high2half2(__half2 value) { return __half2(value.y, value.y); }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __lowhigh2highlow(__half2 value) { return __half2(value.y, value.x); }

// Arithmetic.
inline __half __hadd(__half a, __half b) { return __half(__half2float(a) + __half2float(b)); }
inline __half __hsub(__half a, __half b) { return __half(__half2float(a) - __half2float(b)); }
inline __half __hmul(__half a, __half b) { return __half(__half2float(a) * __half2float(b)); }
inline __half __hdiv(__half a, __half b) { return __half(__half2float(a) / __half2float(b)); }
inline __half __hadd_rn(__half a, __half b) { return __hadd(a, b); }
inline __half __hsub_rn(__half a, __half b) { return __hsub(a, b); }
inline __half __hmul_rn(__half a, __half b) { return __hmul(a, b); }
inline __half __hfma(__half a, __half b, __half c) {
    return __half(std::fma(static_cast<double>(__half2float(a)), static_cast<double>(__half2float(b)),
                           static_cast<double>(__half2float(c))));
}
namespace mgpu::sim::fp16 {
// Clamped to [0, 1]; a NaN gives +0.
inline __half saturated(__half value) {
    const float x = __half2float(value);
    return __half(std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f));
}
}  // namespace mgpu::sim::fp16
inline __half __hadd_sat(__half a, __half b) { return ::mgpu::sim::fp16::saturated(__hadd(a, b)); }
inline __half __hsub_sat(__half a, __half b) { return ::mgpu::sim::fp16::saturated(__hsub(a, b)); }
inline __half __hmul_sat(__half a, __half b) { return ::mgpu::sim::fp16::saturated(__hmul(a, b)); }
inline __half __hfma_sat(__half a, __half b, __half c) { return ::mgpu::sim::fp16::saturated(__hfma(a, b, c)); }
inline __half __hneg(__half a) { return __ushort_as_half(static_cast<unsigned short>(__half_as_ushort(a) ^ 0x8000u)); }
inline __half __habs(__half a) { return __ushort_as_half(static_cast<unsigned short>(__half_as_ushort(a) & 0x7FFFu)); }

// Comparisons: ordered ones are false when either side is NaN, the unordered (…u) true.
inline bool __hisnan(__half a) { return std::isnan(__half2float(a)); }
inline int __hisinf(__half a) {
    const unsigned short bits = __half_as_ushort(a);
    return bits == 0x7C00u ? 1 : (bits == 0xFC00u ? -1 : 0);
}
inline bool __heq(__half a, __half b) { return __half2float(a) == __half2float(b); }
inline bool __hne(__half a, __half b) { return !__hisnan(a) && !__hisnan(b) && __half2float(a) != __half2float(b); }
inline bool __hlt(__half a, __half b) { return __half2float(a) < __half2float(b); }
inline bool __hle(__half a, __half b) { return __half2float(a) <= __half2float(b); }
inline bool __hgt(__half a, __half b) { return __half2float(a) > __half2float(b); }
inline bool __hge(__half a, __half b) { return __half2float(a) >= __half2float(b); }
inline bool __hequ(__half a, __half b) { return __hisnan(a) || __hisnan(b) || __heq(a, b); }
inline bool __hneu(__half a, __half b) { return __half2float(a) != __half2float(b); }
inline bool __hltu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || __hlt(a, b); }
inline bool __hleu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || __hle(a, b); }
inline bool __hgtu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || __hgt(a, b); }
inline bool __hgeu(__half a, __half b) { return __hisnan(a) || __hisnan(b) || __hge(a, b); }
// max and min return the other operand when one is NaN (both NaN: the canonical NaN); the _nan
// forms return NaN when either is. -0 counts as less than +0.
namespace mgpu::sim::fp16 {
inline __half pick(__half a, __half b, bool take_larger, bool nan_wins) {
    const bool a_nan = __hisnan(a), b_nan = __hisnan(b);
    if (a_nan || b_nan) {
        if (nan_wins || (a_nan && b_nan)) return CUDART_NAN_FP16;
        return a_nan ? b : a;
    }
    const float x = __half2float(a), y = __half2float(b);
    if (x == y) {  // equal values, perhaps +0 and -0
        const bool a_negative = (__half_as_ushort(a) & 0x8000u) != 0;
        return (a_negative == take_larger) ? b : a;
    }
    return (x > y) == take_larger ? a : b;
}
}  // namespace mgpu::sim::fp16
inline __half __hmax(__half a, __half b) { return ::mgpu::sim::fp16::pick(a, b, true, false); }
inline __half __hmin(__half a, __half b) { return ::mgpu::sim::fp16::pick(a, b, false, false); }
inline __half __hmax_nan(__half a, __half b) { return ::mgpu::sim::fp16::pick(a, b, true, true); }
inline __half __hmin_nan(__half a, __half b) { return ::mgpu::sim::fp16::pick(a, b, false, true); }

// Math functions, rounded from float's (correctly rounded for the root, within the GPU's
// documented error for the others).
inline __half hsqrt(__half a) { return __half(std::sqrt(__half2float(a))); }
inline __half hrsqrt(__half a) { return __half(1.0f / std::sqrt(__half2float(a))); }
inline __half hrcp(__half a) { return __half(1.0f / __half2float(a)); }
inline __half hexp(__half a) { return __half(std::exp(__half2float(a))); }
inline __half hexp2(__half a) { return __half(std::exp2(__half2float(a))); }
inline __half hexp10(__half a) { return __half(std::pow(10.0f, __half2float(a))); }
inline __half hlog(__half a) { return __half(std::log(__half2float(a))); }
inline __half hlog2(__half a) { return __half(std::log2(__half2float(a))); }
inline __half hlog10(__half a) { return __half(std::log10(__half2float(a))); }
inline __half hsin(__half a) { return __half(std::sin(__half2float(a))); }
inline __half hcos(__half a) { return __half(std::cos(__half2float(a))); }
inline __half htanh(__half a) { return __half(std::tanh(__half2float(a))); }
inline __half hfloor(__half a) { return __half(std::floor(__half2float(a))); }
inline __half hceil(__half a) { return __half(std::ceil(__half2float(a))); }
inline __half htrunc(__half a) { return __half(std::trunc(__half2float(a))); }
inline __half hrint(__half a) { return __half(std::nearbyint(__half2float(a))); }

// The same, lane by lane, on pairs.
#define MGPU_HALF2_BINARY_(name2, name) \
    inline __half2 name2(__half2 a, __half2 b) { return __half2(name(a.x, b.x), name(a.y, b.y)); }
#define MGPU_HALF2_UNARY_(name2, name) \
    inline __half2 name2(__half2 a) { return __half2(name(a.x), name(a.y)); }
MGPU_HALF2_BINARY_(__hadd2, __hadd)
MGPU_HALF2_BINARY_(__hsub2, __hsub)
MGPU_HALF2_BINARY_(__hmul2, __hmul)
MGPU_HALF2_BINARY_(__h2div, __hdiv)
MGPU_HALF2_BINARY_(__hadd2_sat, __hadd_sat)
MGPU_HALF2_BINARY_(__hsub2_sat, __hsub_sat)
MGPU_HALF2_BINARY_(__hmul2_sat, __hmul_sat)
MGPU_HALF2_BINARY_(__hmax2, __hmax)
MGPU_HALF2_BINARY_(__hmin2, __hmin)
MGPU_HALF2_BINARY_(__hmax2_nan, __hmax_nan)
MGPU_HALF2_BINARY_(__hmin2_nan, __hmin_nan)
MGPU_HALF2_UNARY_(__hneg2, __hneg)
MGPU_HALF2_UNARY_(__habs2, __habs)
MGPU_HALF2_UNARY_(h2sqrt, hsqrt)
MGPU_HALF2_UNARY_(h2rsqrt, hrsqrt)
MGPU_HALF2_UNARY_(h2rcp, hrcp)
MGPU_HALF2_UNARY_(h2exp, hexp)
MGPU_HALF2_UNARY_(h2log, hlog)
MGPU_HALF2_UNARY_(h2sin, hsin)
MGPU_HALF2_UNARY_(h2cos, hcos)
MGPU_HALF2_UNARY_(h2floor, hfloor)
MGPU_HALF2_UNARY_(h2ceil, hceil)
MGPU_HALF2_UNARY_(h2trunc, htrunc)
MGPU_HALF2_UNARY_(h2rint, hrint)
#undef MGPU_HALF2_BINARY_
#undef MGPU_HALF2_UNARY_
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __half2 __hfma2_sat(__half2 a, __half2 b, __half2 c) {
    return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
// Comparisons of pairs, operators and atomicAdd, shared with cuda_bf16.h.
MGPU_SIM_REDUCED_FLOAT_COMMON_(__half, __half2, CUDART_ONE_FP16)
