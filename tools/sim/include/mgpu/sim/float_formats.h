// The floating-point formats narrower than float that CUDA and NCCL use (IEEE binary16, bfloat16
// and the OCP 8-bit E4M3 and E5M2), converted to and from float bit for bit as the GPU converts
// them. One implementation serves cuda_fp16.h, cuda_bf16.h and NCCL's reductions.
#pragma once

#include <cstdint>
#include <cstring>

namespace mgpu::sim::formats {

// Rounding of a conversion from float: to nearest even (CUDA's _rn and the default), toward
// zero (_rz), toward minus infinity (_rd), toward plus infinity (_ru).
enum class Rounding : unsigned char { NearestEven, TowardZero, Down, Up };

// float -> binary16 and bfloat16. Overflow gives infinity when rounding goes away from zero and
// the largest finite value otherwise; a NaN gives the canonical NaN 0x7FFF, as CUDA's do.
std::uint16_t float_to_half(float value, Rounding rounding = Rounding::NearestEven);
std::uint16_t float_to_bfloat16(float value, Rounding rounding = Rounding::NearestEven);
// From double, rounded once (not through float).
std::uint16_t double_to_half(double value, Rounding rounding = Rounding::NearestEven);
std::uint16_t double_to_bfloat16(double value, Rounding rounding = Rounding::NearestEven);

// The 8-bit formats saturate to their largest finite value, as CUDA's conversions with
// satfinite do (NCCL's reductions over them).
float e4m3_to_float(std::uint8_t bits);
std::uint8_t float_to_e4m3(float value);
float e5m2_to_float(std::uint8_t bits);
std::uint8_t float_to_e5m2(float value);

// Widening is exact, and cheap enough to inline into every arithmetic operation.
inline float half_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t mantissa = bits & 0x3FFu;
    std::uint32_t result;
    if (exponent == 0x1F) {
        result = sign | 0x7F800000u | (mantissa << 13);   // infinity, or a NaN with its payload
    } else if (exponent != 0) {
        result = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else {
        // Zero or a subnormal: mantissa * 2^-24, exact in float.
        float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        std::uint32_t magnitude_bits;
        std::memcpy(&magnitude_bits, &magnitude, sizeof magnitude_bits);
        result = sign | magnitude_bits;
    }
    float value;
    std::memcpy(&value, &result, sizeof value);
    return value;
}

inline float bfloat16_to_float(std::uint16_t bits) {
    const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &widened, sizeof value);
    return value;
}

}  // namespace mgpu::sim::formats
