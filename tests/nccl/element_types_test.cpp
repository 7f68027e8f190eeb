// The narrow floating formats against their specifications' bit patterns (IEEE 754 binary16,
// bfloat16, OCP 8-bit E4M3 and E5M2): the largest finite values, rounding to nearest even,
// overflow (infinity for half and bfloat16; the largest finite value for the saturating 8-bit
// conversions) and subnormals. Patterns are worked out by hand from the formats' layouts.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "nccl/element_types.h"

using namespace mgpu::sim::nccl;

TEST_CASE("half: exact values, rounding to even, overflow to infinity, subnormals") {
    CHECK(float_to_half(1.0f) == 0x3C00);
    CHECK(float_to_half(-2.0f) == 0xC000);
    CHECK(float_to_half(65504.0f) == 0x7BFF);
    CHECK(float_to_half(65519.0f) == 0x7BFF);                // below the midpoint to 65536
    CHECK(float_to_half(65520.0f) == 0x7C00);                // the midpoint rounds to even: infinity
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);   // tie between 1 and 1+2^-10: even is 1
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);   // tie: even is 1+2^-9
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);   // the smallest subnormal
    CHECK(float_to_half(0.1f) == 0x2E66);
    CHECK(half_to_float(0x3555) == doctest::Approx(0.33325195).epsilon(1e-7));
    CHECK(std::isinf(half_to_float(0x7C00)));
    CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("bfloat16: float's exponent with 7 mantissa bits") {
    CHECK(float_to_bfloat16(1.0f) == 0x3F80);
    CHECK(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);        // tie: even
    CHECK(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);    // tie: even
    CHECK(float_to_bfloat16(-3.0f) == 0xC040);
    CHECK(bfloat16_to_float(0x4049) == 3.140625f);
}

TEST_CASE("8-bit formats: E4M3 up to 448 without infinities, E5M2 up to 57344, both saturating") {
    CHECK(float_to_e4m3(1.0f) == 0x38);
    CHECK(float_to_e4m3(448.0f) == 0x7E);
    CHECK(float_to_e4m3(1000.0f) == 0x7E);
    CHECK(float_to_e4m3(-448.0f) == 0xFE);
    CHECK(float_to_e4m3(std::ldexp(1.0f, -9)) == 0x01);   // the smallest subnormal
    CHECK(e4m3_to_float(0x7E) == 448.0f);
    CHECK(std::isnan(e4m3_to_float(0x7F)));
    CHECK(float_to_e5m2(1.0f) == 0x3C);
    CHECK(float_to_e5m2(57344.0f) == 0x7B);
    CHECK(float_to_e5m2(1e6f) == 0x7B);
    CHECK(e5m2_to_float(0x7B) == 57344.0f);
    CHECK(std::isinf(e5m2_to_float(0x7C)));
}

TEST_CASE("half sums round after every step, as a kernel that stores each partial sum in half does") {
    // 2048 + 1 + 1: in half 2049 is not representable (spacing 2), so each step rounds back to
    // 2048 (a tie, to even); a float accumulator would give 2050.
    const std::uint16_t inputs[3] = {float_to_half(2048.0f), float_to_half(1.0f), float_to_half(1.0f)};
    const void* pointers[3] = {&inputs[0], &inputs[1], &inputs[2]};
    std::uint16_t out = 0;
    reduce(Reduction{}, 1.0, ncclFloat16, pointers, 3, 1, &out);
    CHECK(half_to_float(out) == 2048.0f);
}
