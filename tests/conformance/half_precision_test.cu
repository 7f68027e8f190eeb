// cuda_fp16.h and cuda_bf16.h (CUDA Math API, "Half Precision Intrinsics" and "Bfloat16
// Precision Intrinsics"): conversions round to nearest even unless named otherwise, overflow gives
// infinity, NaN compares unordered; arithmetic rounds each result once to the format. Expected bit
// patterns are worked out from the IEEE binary16 and bfloat16 layouts (Python's struct 'e' format
// gives the same), e.g. 0.1 + 0.2 in half is 0x34CC (0.2998...), a tie rounded to even.
#include <doctest/doctest.h>

#include <cmath>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

constexpr int kResults = 16;

// The same operations on the device; results as bit patterns.
__global__ void half_operations(unsigned short* out, int* flags) {
    const __half tenth = __float2half(0.1f), fifth = __float2half_rn(0.2f);
    out[0] = __half_as_ushort(__hadd(tenth, fifth));
    out[1] = __half_as_ushort(__hmul(__float2half(3.0f), tenth));
    out[2] = __half_as_ushort(hsqrt(__float2half(2.0f)));
    out[3] = __half_as_ushort(__hfma(__float2half(2.0f), __float2half(3.0f), __float2half(1.0f)));
    out[4] = __half_as_ushort(__hadd(__float2half(65504.0f), __float2half(65504.0f)));
    out[5] = __half_as_ushort(__hneg(__float2half(1.0f)));
    out[6] = __half_as_ushort(__habs(__float2half(-2.0f)));
    out[7] = __half_as_ushort(__hmax(CUDART_NAN_FP16, __float2half(1.0f)));
    const __half2 pair = __hmul2(__floats2half2_rn(1.5f, -2.5f), __floats2half2_rn(2.0f, 2.0f));
    out[8] = __half_as_ushort(__low2half(pair));
    out[9] = __half_as_ushort(__high2half(pair));
    __half sum = tenth;
    sum += fifth;
    out[10] = __half_as_ushort(sum * __float2half(2.0f));
    const __nv_bfloat16 b_tenth = __float2bfloat16(0.1f);
    out[11] = __bfloat16_as_ushort(b_tenth);
    out[12] = __bfloat16_as_ushort(__hmul(__float2bfloat16(3.0f), b_tenth));
    out[13] = __bfloat16_as_ushort(__hadd(__float2bfloat16(1.0f), __float2bfloat16(0.00390625f)));   // 1 + 2^-8
    out[14] = __bfloat16_as_ushort(hsqrt(__float2bfloat16(2.0f)));
    const __nv_bfloat162 b_pair = __hadd2(__floats2bfloat162_rn(1.0f, 2.0f), __floats2bfloat162_rn(3.0f, 4.0f));
    out[15] = static_cast<unsigned short>(__low2float(b_pair) * 10 + __high2float(b_pair));
    flags[0] = __heq(CUDART_NAN_FP16, CUDART_NAN_FP16);
    flags[1] = __hneu(CUDART_NAN_FP16, __float2half(1.0f));
    flags[2] = __float2half(1.0f) < __float2half(2.0f);
    flags[3] = __hisinf(__hmul(__float2half(300.0f), __float2half(300.0f)));
    flags[4] = __half2int_rn(__float2half(2.5f));   // device-only in CUDA 13's cuda_fp16.h
}

const std::vector<unsigned short> kExpected = {
    0x34CC,   // 0.1 + 0.2 = 0.2999267578125 exactly, a tie between 0x34CC and 0x34CD: even
    0x34CC,   // 3 * 0.0999755859375, the same tie
    0x3DA8,   // sqrt(2) = 1.41421...: 1448/1024
    0x4700,   // 2 * 3 + 1 = 7
    0x7C00,   // 65504 + 65504 overflows to infinity
    0xBC00,   // -1
    0x4000,   // |-2|
    0x3C00,   // max(NaN, 1) = 1
    0x4200,   // 1.5 * 2 = 3
    0xC500,   // -2.5 * 2 = -5
    0x38CC,   // (0.1 + 0.2) * 2, exact doubling of 0x34CC
    0x3DCD,   // bfloat16 0.1 = 0.10009765625
    0x3E9A,   // 3 * 0.10009765625 = 0.30029296875: 154/512
    0x3F80,   // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1
    0x3FB5,   // sqrt(2) in bfloat16
    46,       // (1 + 3) * 10 + (2 + 4)
};

}  // namespace

TEST_CASE("half and bfloat16 conversions are bit-exact, with CUDA's rounding, overflow and NaN") {
    CHECK(__half_as_ushort(__float2half(1.0f)) == 0x3C00);
    CHECK(__half_as_ushort(__float2half(65504.0f)) == 0x7BFF);
    CHECK(__half_as_ushort(__float2half(65519.0f)) == 0x7BFF);   // below the midpoint to 65536
    CHECK(__half_as_ushort(__float2half(65520.0f)) == 0x7C00);   // the midpoint rounds to even: infinity
    CHECK(__half_as_ushort(__float2half_rz(65520.0f)) == 0x7BFF);
    CHECK(__half_as_ushort(__float2half(1.0f + std::ldexp(1.0f, -11))) == 0x3C00);       // tie: even
    CHECK(__half_as_ushort(__float2half(1.0f + 3 * std::ldexp(1.0f, -11))) == 0x3C02);   // tie: even
    CHECK(__half_as_ushort(__float2half_ru(1.0f + std::ldexp(1.0f, -12))) == 0x3C01);
    CHECK(__half_as_ushort(__float2half_rd(-1.0f - std::ldexp(1.0f, -12))) == 0xBC01);
    CHECK(__half_as_ushort(__float2half(std::ldexp(1.0f, -24))) == 0x0001);   // the smallest subnormal
    CHECK(__half_as_ushort(__float2half(-0.0f)) == 0x8000);
    CHECK(__half_as_ushort(__float2half(0.1f)) == 0x2E66);
    CHECK(__hisnan(__float2half(NAN)));
    CHECK(__half2float(__ushort_as_half(0x3555)) == 0.333251953125f);
    CHECK(__half2float(__ushort_as_half(0x0001)) == std::ldexp(1.0f, -24));
    CHECK(std::isinf(__half2float(__ushort_as_half(0xFC00))));
    CHECK(__half2int_rz(__float2half(-2.75f)) == -2);
    CHECK(__bfloat16_as_ushort(__float2bfloat16(1.0f)) == 0x3F80);
    CHECK(__bfloat16_as_ushort(__float2bfloat16(1.0f + 3 * std::ldexp(1.0f, -8))) == 0x3F82);   // tie: even
    CHECK(__bfloat16_as_ushort(__float2bfloat16(-3.0f)) == 0xC040);
    CHECK(__bfloat16_as_ushort(__float2bfloat16(INFINITY)) == 0x7F80);
    CHECK(__bfloat162float(__ushort_as_bfloat16(0x3DCD)) == 0.10009765625f);
    const float2 widened = __half22float2(__floats2half2_rn(0.5f, -0.25f));
    CHECK(widened.x == 0.5f);
    CHECK(widened.y == -0.25f);
}

TEST_CASE("half and bfloat16 arithmetic gives the same bits on the host and in a kernel") {
    use_machine("h200");
    unsigned short* d_out = nullptr;
    int* d_flags = nullptr;
    REQUIRE(cudaMalloc(&d_out, kResults * sizeof(unsigned short)) == cudaSuccess);
    REQUIRE(cudaMalloc(&d_flags, 5 * sizeof(int)) == cudaSuccess);
    half_operations<<<1, 1>>>(d_out, d_flags);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<unsigned short> out(kResults);
    int flags[5] = {};
    REQUIRE(cudaMemcpy(out.data(), d_out, kResults * sizeof(unsigned short), cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaMemcpy(flags, d_flags, sizeof flags, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < kResults; ++i) {
        CAPTURE(i);
        CHECK(out[i] == kExpected[i]);
    }
    CHECK(flags[0] == 0);   // NaN == NaN is false
    CHECK(flags[1] == 1);   // unordered not-equal is true for NaN
    CHECK(flags[2] == 1);
    CHECK(flags[3] == 1);   // 90000 overflows to +infinity
    CHECK(flags[4] == 2);   // 2.5 rounds to even
    // Host code computes the same.
    CHECK(__half_as_ushort(__float2half(0.1f) + __float2half(0.2f)) == 0x34CC);
    CHECK(__bfloat16_as_ushort(__float2bfloat16(3.0f) * __float2bfloat16(0.1f)) == 0x3E9A);
    REQUIRE(cudaFree(d_out) == cudaSuccess);
    REQUIRE(cudaFree(d_flags) == cudaSuccess);
}
