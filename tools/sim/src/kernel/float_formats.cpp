// Conversions from float to the narrow formats: the value is scaled to the format's spacing at
// its exponent and rounded there in double, where every float and every spacing is exact.
#include "mgpu/sim/float_formats.h"

#include <cmath>
#include <limits>

namespace mgpu::sim::formats {
namespace {

// A binary floating-point format narrower than float: sign, exponent and mantissa bits.
struct NarrowFormat {
    int exponent_bits;
    int mantissa_bits;
    bool has_infinity;   // false: the all-ones exponent still holds numbers (e4m3), NaN is all ones
    bool saturate;       // overflow gives the largest finite value instead of infinity
    std::uint32_t canonical_nan;   // what every NaN converts to (sign included)
    int bias() const { return (1 << (exponent_bits - 1)) - 1; }
    std::uint32_t exponent_mask() const { return (1u << exponent_bits) - 1; }
    std::uint32_t mantissa_mask() const { return (1u << mantissa_bits) - 1; }
};

constexpr NarrowFormat kHalf{5, 10, true, false, 0x7FFF};
constexpr NarrowFormat kBfloat16{8, 7, true, false, 0x7FFF};
constexpr NarrowFormat kE4m3{4, 3, false, true, 0x7F};
constexpr NarrowFormat kE5m2{5, 2, true, true, 0x7F};

double decode(std::uint32_t bits, const NarrowFormat& f) {
    const bool negative = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1u;
    const std::uint32_t exponent = (bits >> f.mantissa_bits) & f.exponent_mask();
    const std::uint32_t mantissa = bits & f.mantissa_mask();
    double value;
    if (exponent == f.exponent_mask() && f.has_infinity) {
        value = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (exponent == f.exponent_mask() && mantissa == f.mantissa_mask()) {
        value = std::numeric_limits<double>::quiet_NaN();
    } else if (exponent == 0) {
        value = std::ldexp(static_cast<double>(mantissa), 1 - f.bias() - f.mantissa_bits);
    } else {
        value = std::ldexp(static_cast<double>((1u << f.mantissa_bits) | mantissa),
                           static_cast<int>(exponent) - f.bias() - f.mantissa_bits);
    }
    return negative ? -value : value;
}

std::uint32_t largest_finite_bits(const NarrowFormat& f) {
    if (f.has_infinity) return ((f.exponent_mask() - 1) << f.mantissa_bits) | f.mantissa_mask();
    return (f.exponent_mask() << f.mantissa_bits) | (f.mantissa_mask() - 1);
}

// Rounds a magnitude given in units of the format's spacing to a whole number of them.
double round_units(double units, Rounding rounding, bool negative) {
    switch (rounding) {
    case Rounding::TowardZero: return std::trunc(units);
    case Rounding::Down: return negative ? std::ceil(units) : std::floor(units);
    case Rounding::Up: return negative ? std::floor(units) : std::ceil(units);
    case Rounding::NearestEven: break;
    }
    const double whole = std::floor(units);
    const double rest = units - whole;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(whole, 2.0) != 0)) return whole + 1;
    return whole;
}

std::uint32_t encode(double input, const NarrowFormat& f, Rounding rounding) {
    if (std::isnan(input)) return f.canonical_nan;
    const bool negative = std::signbit(input);
    const std::uint32_t sign = negative ? 1u << (f.exponent_bits + f.mantissa_bits) : 0u;
    const std::uint32_t largest = largest_finite_bits(f);
    const double largest_value = decode(largest, f);
    // Overflow goes to infinity only when the rounding goes away from zero on this side.
    const bool away = rounding == Rounding::NearestEven || (rounding == Rounding::Up && !negative) ||
                      (rounding == Rounding::Down && negative);
    const std::uint32_t infinity =
        f.has_infinity && !f.saturate && away ? f.exponent_mask() << f.mantissa_bits : largest;
    double magnitude = std::fabs(input);
    if (std::isinf(magnitude)) return sign | (f.has_infinity && !f.saturate ? f.exponent_mask() << f.mantissa_bits : largest);
    if (magnitude == 0) return sign;
    const int min_exponent = 1 - f.bias();
    int exponent = std::ilogb(magnitude);
    if (exponent < min_exponent) exponent = min_exponent;
    const double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
    magnitude = round_units(magnitude / quantum, rounding, negative) * quantum;
    if (magnitude > largest_value) return sign | infinity;
    if (magnitude == 0) return sign;
    exponent = std::ilogb(magnitude);
    if (exponent < min_exponent)
        return sign | static_cast<std::uint32_t>(std::ldexp(magnitude, f.mantissa_bits - min_exponent));
    const auto mantissa = static_cast<std::uint32_t>(std::ldexp(magnitude, f.mantissa_bits - exponent)) & f.mantissa_mask();
    return sign | (static_cast<std::uint32_t>(exponent + f.bias()) << f.mantissa_bits) | mantissa;
}

}  // namespace

std::uint16_t float_to_half(float value, Rounding rounding) {
    return static_cast<std::uint16_t>(encode(value, kHalf, rounding));
}
std::uint16_t float_to_bfloat16(float value, Rounding rounding) {
    return static_cast<std::uint16_t>(encode(value, kBfloat16, rounding));
}
std::uint16_t double_to_half(double value, Rounding rounding) {
    return static_cast<std::uint16_t>(encode(value, kHalf, rounding));
}
std::uint16_t double_to_bfloat16(double value, Rounding rounding) {
    return static_cast<std::uint16_t>(encode(value, kBfloat16, rounding));
}
float e4m3_to_float(std::uint8_t bits) { return static_cast<float>(decode(bits, kE4m3)); }
std::uint8_t float_to_e4m3(float value) {
    return static_cast<std::uint8_t>(encode(value, kE4m3, Rounding::NearestEven));
}
float e5m2_to_float(std::uint8_t bits) { return static_cast<float>(decode(bits, kE5m2)); }
std::uint8_t float_to_e5m2(float value) {
    return static_cast<std::uint8_t>(encode(value, kE5m2, Rounding::NearestEven));
}

}  // namespace mgpu::sim::formats
