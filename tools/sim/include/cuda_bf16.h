// CUDA's cuda_bf16.h: the bfloat16 types __nv_bfloat16 and __nv_bfloat162, their conversions,
// operators and intrinsics (the same names as cuda_fp16.h's, overloaded), for host and device
// code alike. Made the same way as cuda_fp16.h: float's 24-bit significand is more than twice
// bfloat16's 8 plus 2, so computing in float and rounding once to nearest even gives the GPU's
// results; fused multiply-adds are computed in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "mgpu/sim/float_formats.h"
#include "mgpu/sim/reduced_float_common.h"
#include "vector_types.h"

struct __nv_bfloat16_raw {
    unsigned short x;
};

struct __nv_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};

struct __nv_bfloat16 {
protected:
    unsigned short __x;

public:
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw& raw) : __x(raw.x) {}
    __nv_bfloat16(float value) : __x(::mgpu::sim::formats::float_to_bfloat16(value)) {}
    __nv_bfloat16(double value) : __x(::mgpu::sim::formats::double_to_bfloat16(value)) {}
    __nv_bfloat16(int value) : __nv_bfloat16(static_cast<float>(value)) {}
    __nv_bfloat16(unsigned int value) : __nv_bfloat16(static_cast<float>(value)) {}
    __nv_bfloat16(short value) : __nv_bfloat16(static_cast<float>(value)) {}
    __nv_bfloat16(unsigned short value) : __nv_bfloat16(static_cast<float>(value)) {}
    __nv_bfloat16(long long value) : __nv_bfloat16(static_cast<float>(value)) {}
    __nv_bfloat16(unsigned long long value) : __nv_bfloat16(static_cast<float>(value)) {}

    __nv_bfloat16& operator=(const __nv_bfloat16_raw& raw) {
        __x = raw.x;
        return *this;
    }
    __nv_bfloat16& operator=(float value) { return *this = __nv_bfloat16(value); }
    __nv_bfloat16& operator=(double value) { return *this = __nv_bfloat16(value); }

    constexpr operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
    operator float() const { return ::mgpu::sim::formats::bfloat16_to_float(__x); }
    explicit operator int() const { return static_cast<int>(float(*this)); }
    explicit operator unsigned int() const { return static_cast<unsigned int>(float(*this)); }
    explicit operator short() const { return static_cast<short>(float(*this)); }
    explicit operator long long() const { return static_cast<long long>(float(*this)); }
    explicit operator bool() const { return (__x & 0x7FFFu) != 0; }
};

struct __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;

    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& low, const __nv_bfloat16& high) : x(low), y(high) {}
    constexpr __nv_bfloat162(const __nv_bfloat162_raw& raw)
        : x(__nv_bfloat16_raw{raw.x}), y(__nv_bfloat16_raw{raw.y}) {}
    __nv_bfloat162& operator=(const __nv_bfloat162_raw& raw) {
        x = __nv_bfloat16_raw{raw.x};
        y = __nv_bfloat16_raw{raw.y};
        return *this;
    }
    constexpr operator __nv_bfloat162_raw() const {
        return __nv_bfloat162_raw{static_cast<__nv_bfloat16_raw>(x).x, static_cast<__nv_bfloat16_raw>(y).x};
    }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#define CUDART_INF_BF16 (__ushort_as_bfloat16(static_cast<unsigned short>(0x7F80U)))
#define CUDART_NAN_BF16 (__ushort_as_bfloat16(static_cast<unsigned short>(0x7FFFU)))
#define CUDART_MAX_NORMAL_BF16 (__ushort_as_bfloat16(static_cast<unsigned short>(0x7F7FU)))
#define CUDART_ONE_BF16 (__ushort_as_bfloat16(static_cast<unsigned short>(0x3F80U)))
#define CUDART_ZERO_BF16 (__ushort_as_bfloat16(static_cast<unsigned short>(0x0000U)))

// Bits and conversions.
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }
inline short __bfloat16_as_short(__nv_bfloat16 h) { return static_cast<short>(static_cast<__nv_bfloat16_raw>(h).x); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return __nv_bfloat16(__nv_bfloat16_raw{bits}); }
inline __nv_bfloat16 __short_as_bfloat16(short bits) {
    return __nv_bfloat16(__nv_bfloat16_raw{static_cast<unsigned short>(bits)});
}

namespace mgpu::sim::bf16 {
inline __nv_bfloat16 rounded(float value, formats::Rounding rounding) {
    return __ushort_as_bfloat16(formats::float_to_bfloat16(value, rounding));
}
}  // namespace mgpu::sim::bf16

inline float __bfloat162float(__nv_bfloat16 h) {
    return ::mgpu::sim::formats::bfloat16_to_float(__bfloat16_as_ushort(h));
}
inline __nv_bfloat16 __float2bfloat16(float value) { return __nv_bfloat16(value); }
inline __nv_bfloat16 __float2bfloat16_rn(float value) { return __nv_bfloat16(value); }
inline __nv_bfloat16 __float2bfloat16_rz(float value) {
    return ::mgpu::sim::bf16::rounded(value, ::mgpu::sim::formats::Rounding::TowardZero);
}
inline __nv_bfloat16 __float2bfloat16_rd(float value) {
    return ::mgpu::sim::bf16::rounded(value, ::mgpu::sim::formats::Rounding::Down);
}
inline __nv_bfloat16 __float2bfloat16_ru(float value) {
    return ::mgpu::sim::bf16::rounded(value, ::mgpu::sim::formats::Rounding::Up);
}
inline __nv_bfloat16 __double2bfloat16(double value) { return __nv_bfloat16(value); }
inline __nv_bfloat16 __int2bfloat16_rn(int value) { return __nv_bfloat16(static_cast<float>(value)); }
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned int value) { return __nv_bfloat16(static_cast<float>(value)); }
inline __nv_bfloat16 __short2bfloat16_rn(short value) { return __nv_bfloat16(static_cast<float>(value)); }
inline __nv_bfloat16 __ushort2bfloat16_rn(unsigned short value) { return __nv_bfloat16(static_cast<float>(value)); }
inline __nv_bfloat16 __ll2bfloat16_rn(long long value) { return __nv_bfloat16(static_cast<float>(value)); }
// To integers: NaN gives 0, values beyond the range the nearest limit, as the GPU's cvt does.
namespace mgpu::sim::bf16 {
template <class Integer>
Integer to_integer(float value) {
    if (std::isnan(value)) return 0;
    if (value <= static_cast<float>(std::numeric_limits<Integer>::min())) return std::numeric_limits<Integer>::min();
    if (value >= static_cast<float>(std::numeric_limits<Integer>::max())) return std::numeric_limits<Integer>::max();
    return static_cast<Integer>(value);
}
}  // namespace mgpu::sim::bf16
inline int __bfloat162int_rz(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<int>(std::trunc(__bfloat162float(h)));
}
inline int __bfloat162int_rn(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<int>(std::nearbyint(__bfloat162float(h)));
}
inline int __bfloat162int_rd(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<int>(std::floor(__bfloat162float(h)));
}
inline int __bfloat162int_ru(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<int>(std::ceil(__bfloat162float(h)));
}
inline unsigned int __bfloat162uint_rz(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<unsigned int>(std::trunc(__bfloat162float(h)));
}
inline unsigned int __bfloat162uint_rn(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<unsigned int>(std::nearbyint(__bfloat162float(h)));
}
inline short __bfloat162short_rz(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<short>(std::trunc(__bfloat162float(h)));
}
inline short __bfloat162short_rn(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<short>(std::nearbyint(__bfloat162float(h)));
}
inline long long __bfloat162ll_rz(__nv_bfloat16 h) {
    return ::mgpu::sim::bf16::to_integer<long long>(std::trunc(__bfloat162float(h)));
}

// Pairs.
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 low, __nv_bfloat16 high) { return __nv_bfloat162(low, high); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 value) { return __nv_bfloat162(value, value); }
inline __nv_bfloat162 __float2bfloat162_rn(float value) {
    return __nv_bfloat162(__nv_bfloat16(value), __nv_bfloat16(value));
}
inline __nv_bfloat162 __floats2bfloat162_rn(float low, float high) {
    return __nv_bfloat162(__nv_bfloat16(low), __nv_bfloat16(high));
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 value) {
    return __nv_bfloat162(__nv_bfloat16(value.x), __nv_bfloat16(value.y));
}
inline float2 __bfloat1622float2(__nv_bfloat162 value) {
    return float2{__bfloat162float(value.x), __bfloat162float(value.y)};
}
inline float __low2float(__nv_bfloat162 value) { return __bfloat162float(value.x); }
inline float __high2float(__nv_bfloat162 value) { return __bfloat162float(value.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 value) { return value.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 value) { return value.y; }
inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 value) { return __nv_bfloat162(value.x, value.x); }
inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 value) { return __nv_bfloat162(value.y, value.y); }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 value) { return __nv_bfloat162(value.y, value.x); }

// Arithmetic.
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __nv_bfloat16(__bfloat162float(a) + __bfloat162float(b));
}
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __nv_bfloat16(__bfloat162float(a) - __bfloat162float(b));
}
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __nv_bfloat16(__bfloat162float(a) * __bfloat162float(b));
}
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __nv_bfloat16(__bfloat162float(a) / __bfloat162float(b));
}
inline __nv_bfloat16 __hadd_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 __hsub_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 __hmul_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
    return __nv_bfloat16(std::fma(static_cast<double>(__bfloat162float(a)), static_cast<double>(__bfloat162float(b)),
                                  static_cast<double>(__bfloat162float(c))));
}
namespace mgpu::sim::bf16 {
// Clamped to [0, 1]; a NaN gives +0.
inline __nv_bfloat16 saturated(__nv_bfloat16 value) {
    const float x = __bfloat162float(value);
    return __nv_bfloat16(std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f));
}
}  // namespace mgpu::sim::bf16
inline __nv_bfloat16 __hadd_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::saturated(__hadd(a, b)); }
inline __nv_bfloat16 __hsub_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::saturated(__hsub(a, b)); }
inline __nv_bfloat16 __hmul_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::saturated(__hmul(a, b)); }
inline __nv_bfloat16 __hfma_sat(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
    return ::mgpu::sim::bf16::saturated(__hfma(a, b, c));
}
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) {
    return __ushort_as_bfloat16(static_cast<unsigned short>(__bfloat16_as_ushort(a) ^ 0x8000u));
}
inline __nv_bfloat16 __habs(__nv_bfloat16 a) {
    return __ushort_as_bfloat16(static_cast<unsigned short>(__bfloat16_as_ushort(a) & 0x7FFFu));
}

// Comparisons: ordered ones are false when either side is NaN, the unordered (…u) true.
inline bool __hisnan(__nv_bfloat16 a) { return std::isnan(__bfloat162float(a)); }
inline int __hisinf(__nv_bfloat16 a) {
    const unsigned short bits = __bfloat16_as_ushort(a);
    return bits == 0x7F80u ? 1 : (bits == 0xFF80u ? -1 : 0);
}
inline bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) == __bfloat162float(b); }
inline bool __hne(__nv_bfloat16 a, __nv_bfloat16 b) {
    return !__hisnan(a) && !__hisnan(b) && __bfloat162float(a) != __bfloat162float(b);
}
inline bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b); }
inline bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) <= __bfloat162float(b); }
inline bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) > __bfloat162float(b); }
inline bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) >= __bfloat162float(b); }
inline bool __hequ(__nv_bfloat16 a, __nv_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __heq(a, b); }
inline bool __hneu(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) != __bfloat162float(b); }
inline bool __hltu(__nv_bfloat16 a, __nv_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __hlt(a, b); }
inline bool __hleu(__nv_bfloat16 a, __nv_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __hle(a, b); }
inline bool __hgtu(__nv_bfloat16 a, __nv_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __hgt(a, b); }
inline bool __hgeu(__nv_bfloat16 a, __nv_bfloat16 b) { return __hisnan(a) || __hisnan(b) || __hge(a, b); }
// max and min return the other operand when one is NaN (both NaN: the canonical NaN); the _nan
// forms return NaN when either is. -0 counts as less than +0.
namespace mgpu::sim::bf16 {
inline __nv_bfloat16 pick(__nv_bfloat16 a, __nv_bfloat16 b, bool take_larger, bool nan_wins) {
    const bool a_nan = __hisnan(a), b_nan = __hisnan(b);
    if (a_nan || b_nan) {
        if (nan_wins || (a_nan && b_nan)) return CUDART_NAN_BF16;
        return a_nan ? b : a;
    }
    const float x = __bfloat162float(a), y = __bfloat162float(b);
    if (x == y) {  // equal values, perhaps +0 and -0
        const bool a_negative = (__bfloat16_as_ushort(a) & 0x8000u) != 0;
        return (a_negative == take_larger) ? b : a;
    }
    return (x > y) == take_larger ? a : b;
}
}  // namespace mgpu::sim::bf16
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::pick(a, b, true, false); }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::pick(a, b, false, false); }
inline __nv_bfloat16 __hmax_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::pick(a, b, true, true); }
inline __nv_bfloat16 __hmin_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return ::mgpu::sim::bf16::pick(a, b, false, true); }

// Math functions, rounded from float's (correctly rounded for the root, within the GPU's
// documented error for the others).
inline __nv_bfloat16 hsqrt(__nv_bfloat16 a) { return __nv_bfloat16(std::sqrt(__bfloat162float(a))); }
inline __nv_bfloat16 hrsqrt(__nv_bfloat16 a) { return __nv_bfloat16(1.0f / std::sqrt(__bfloat162float(a))); }
inline __nv_bfloat16 hrcp(__nv_bfloat16 a) { return __nv_bfloat16(1.0f / __bfloat162float(a)); }
inline __nv_bfloat16 hexp(__nv_bfloat16 a) { return __nv_bfloat16(std::exp(__bfloat162float(a))); }
inline __nv_bfloat16 hexp2(__nv_bfloat16 a) { return __nv_bfloat16(std::exp2(__bfloat162float(a))); }
inline __nv_bfloat16 hexp10(__nv_bfloat16 a) { return __nv_bfloat16(std::pow(10.0f, __bfloat162float(a))); }
inline __nv_bfloat16 hlog(__nv_bfloat16 a) { return __nv_bfloat16(std::log(__bfloat162float(a))); }
inline __nv_bfloat16 hlog2(__nv_bfloat16 a) { return __nv_bfloat16(std::log2(__bfloat162float(a))); }
inline __nv_bfloat16 hlog10(__nv_bfloat16 a) { return __nv_bfloat16(std::log10(__bfloat162float(a))); }
inline __nv_bfloat16 hsin(__nv_bfloat16 a) { return __nv_bfloat16(std::sin(__bfloat162float(a))); }
inline __nv_bfloat16 hcos(__nv_bfloat16 a) { return __nv_bfloat16(std::cos(__bfloat162float(a))); }
inline __nv_bfloat16 htanh(__nv_bfloat16 a) { return __nv_bfloat16(std::tanh(__bfloat162float(a))); }
inline __nv_bfloat16 hfloor(__nv_bfloat16 a) { return __nv_bfloat16(std::floor(__bfloat162float(a))); }
inline __nv_bfloat16 hceil(__nv_bfloat16 a) { return __nv_bfloat16(std::ceil(__bfloat162float(a))); }
inline __nv_bfloat16 htrunc(__nv_bfloat16 a) { return __nv_bfloat16(std::trunc(__bfloat162float(a))); }
inline __nv_bfloat16 hrint(__nv_bfloat16 a) { return __nv_bfloat16(std::nearbyint(__bfloat162float(a))); }

// The same, lane by lane, on pairs.
#define MGPU_BF162_BINARY_(name2, name)                               \
    inline __nv_bfloat162 name2(__nv_bfloat162 a, __nv_bfloat162 b) { \
        return __nv_bfloat162(name(a.x, b.x), name(a.y, b.y));        \
    }
#define MGPU_BF162_UNARY_(name2, name) \
    inline __nv_bfloat162 name2(__nv_bfloat162 a) { return __nv_bfloat162(name(a.x), name(a.y)); }
MGPU_BF162_BINARY_(__hadd2, __hadd)
MGPU_BF162_BINARY_(__hsub2, __hsub)
MGPU_BF162_BINARY_(__hmul2, __hmul)
MGPU_BF162_BINARY_(__h2div, __hdiv)
MGPU_BF162_BINARY_(__hadd2_sat, __hadd_sat)
MGPU_BF162_BINARY_(__hsub2_sat, __hsub_sat)
MGPU_BF162_BINARY_(__hmul2_sat, __hmul_sat)
MGPU_BF162_BINARY_(__hmax2, __hmax)
MGPU_BF162_BINARY_(__hmin2, __hmin)
MGPU_BF162_BINARY_(__hmax2_nan, __hmax_nan)
MGPU_BF162_BINARY_(__hmin2_nan, __hmin_nan)
MGPU_BF162_UNARY_(__hneg2, __hneg)
MGPU_BF162_UNARY_(__habs2, __habs)
MGPU_BF162_UNARY_(h2sqrt, hsqrt)
MGPU_BF162_UNARY_(h2rsqrt, hrsqrt)
MGPU_BF162_UNARY_(h2rcp, hrcp)
MGPU_BF162_UNARY_(h2exp, hexp)
MGPU_BF162_UNARY_(h2log, hlog)
MGPU_BF162_UNARY_(h2sin, hsin)
MGPU_BF162_UNARY_(h2cos, hcos)
MGPU_BF162_UNARY_(h2floor, hfloor)
MGPU_BF162_UNARY_(h2ceil, hceil)
MGPU_BF162_UNARY_(h2trunc, htrunc)
MGPU_BF162_UNARY_(h2rint, hrint)
#undef MGPU_BF162_BINARY_
#undef MGPU_BF162_UNARY_
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
    return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __nv_bfloat162 __hfma2_sat(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
    return __nv_bfloat162(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
// Comparisons of pairs, operators and atomicAdd, shared with cuda_fp16.h.
MGPU_SIM_REDUCED_FLOAT_COMMON_(__nv_bfloat16, __nv_bfloat162, CUDART_ONE_BF16)
