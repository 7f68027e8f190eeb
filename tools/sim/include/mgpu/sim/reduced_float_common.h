// The part of cuda_fp16.h and cuda_bf16.h that is the same for both formats, written once: the
// lane-wise comparisons of the pair types, the operators cuda_fp16.hpp and cuda_bf16.hpp define for
// host and device code, and atomicAdd (a plain read-modify-write, atomic here for the reason
// device_atomics.h gives). Each header expands the macro for its own types, so the functions keep
// the exact, non-template signatures CUDA declares. T is the scalar type, T2 the pair, ONE its 1.
#pragma once

#define MGPU_SIM_REDUCED_FLOAT_COMMON_(T, T2, ONE) \
    inline T2 __heq2(T2 a, T2 b) { return T2(T(__heq(a.x, b.x) ? 1.0f : 0.0f), T(__heq(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hbeq2(T2 a, T2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); } \
    inline T2 __hne2(T2 a, T2 b) { return T2(T(__hne(a.x, b.x) ? 1.0f : 0.0f), T(__hne(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hbne2(T2 a, T2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); } \
    inline T2 __hlt2(T2 a, T2 b) { return T2(T(__hlt(a.x, b.x) ? 1.0f : 0.0f), T(__hlt(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hblt2(T2 a, T2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); } \
    inline T2 __hle2(T2 a, T2 b) { return T2(T(__hle(a.x, b.x) ? 1.0f : 0.0f), T(__hle(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hble2(T2 a, T2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); } \
    inline T2 __hgt2(T2 a, T2 b) { return T2(T(__hgt(a.x, b.x) ? 1.0f : 0.0f), T(__hgt(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hbgt2(T2 a, T2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); } \
    inline T2 __hge2(T2 a, T2 b) { return T2(T(__hge(a.x, b.x) ? 1.0f : 0.0f), T(__hge(a.y, b.y) ? 1.0f : 0.0f)); } \
    inline bool __hbge2(T2 a, T2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); } \
    inline T2 __hisnan2(T2 a) { \
        return T2(T(__hisnan(a.x) ? 1.0f : 0.0f), T(__hisnan(a.y) ? 1.0f : 0.0f)); \
    } \
    inline T operator+(const T& a, const T& b) { return __hadd(a, b); } \
    inline T operator-(const T& a, const T& b) { return __hsub(a, b); } \
    inline T operator*(const T& a, const T& b) { return __hmul(a, b); } \
    inline T operator/(const T& a, const T& b) { return __hdiv(a, b); } \
    inline T& operator+=(T& a, const T& b) { return a = __hadd(a, b); } \
    inline T& operator-=(T& a, const T& b) { return a = __hsub(a, b); } \
    inline T& operator*=(T& a, const T& b) { return a = __hmul(a, b); } \
    inline T& operator/=(T& a, const T& b) { return a = __hdiv(a, b); } \
    inline T& operator++(T& a) { return a = __hadd(a, ONE); } \
    inline T& operator--(T& a) { return a = __hsub(a, ONE); } \
    inline T operator++(T& a, int) { \
        const T old = a; \
        ++a; \
        return old; \
    } \
    inline T operator--(T& a, int) { \
        const T old = a; \
        --a; \
        return old; \
    } \
    inline T operator+(const T& a) { return a; } \
    inline T operator-(const T& a) { return __hneg(a); } \
    inline bool operator==(const T& a, const T& b) { return __heq(a, b); } \
    inline bool operator!=(const T& a, const T& b) { return __hneu(a, b); } \
    inline bool operator<(const T& a, const T& b) { return __hlt(a, b); } \
    inline bool operator<=(const T& a, const T& b) { return __hle(a, b); } \
    inline bool operator>(const T& a, const T& b) { return __hgt(a, b); } \
    inline bool operator>=(const T& a, const T& b) { return __hge(a, b); } \
    inline T2 operator+(const T2& a, const T2& b) { return __hadd2(a, b); } \
    inline T2 operator-(const T2& a, const T2& b) { return __hsub2(a, b); } \
    inline T2 operator*(const T2& a, const T2& b) { return __hmul2(a, b); } \
    inline T2 operator/(const T2& a, const T2& b) { return __h2div(a, b); } \
    inline T2& operator+=(T2& a, const T2& b) { return a = __hadd2(a, b); } \
    inline T2& operator-=(T2& a, const T2& b) { return a = __hsub2(a, b); } \
    inline T2& operator*=(T2& a, const T2& b) { return a = __hmul2(a, b); } \
    inline T2& operator/=(T2& a, const T2& b) { return a = __h2div(a, b); } \
    inline T2 operator+(const T2& a) { return a; } \
    inline T2 operator-(const T2& a) { return __hneg2(a); } \
    inline bool operator==(const T2& a, const T2& b) { return __hbeq2(a, b); } \
    inline bool operator!=(const T2& a, const T2& b) { return __hneu(a.x, b.x) && __hneu(a.y, b.y); } \
    inline T atomicAdd(T* address, T value) { \
        const T old = *address; \
        *address = __hadd(old, value); \
        return old; \
    } \
    inline T2 atomicAdd(T2* address, T2 value) { \
        const T2 old = *address; \
        *address = __hadd2(old, value); \
        return old; \
    }
