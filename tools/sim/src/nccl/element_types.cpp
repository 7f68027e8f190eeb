#include "element_types.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace mgpu::sim::nccl {

bool valid_type(int type) { return type >= 0 && type < ncclNumTypes; }

std::size_t type_size(ncclDataType_t type) {
    switch (type) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

const char* type_name(ncclDataType_t type) {
    switch (type) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    case ncclFloat8e4m3: return "ncclFloat8e4m3";
    case ncclFloat8e5m2: return "ncclFloat8e5m2";
    default: return "invalid type";
    }
}

const char* op_name(ncclRedOp_t op) {
    switch (op) {
    case ncclSum: return "ncclSum";
    case ncclProd: return "ncclProd";
    case ncclMax: return "ncclMax";
    case ncclMin: return "ncclMin";
    case ncclAvg: return "ncclAvg";
    default: return "premulsum";
    }
}

bool is_floating(ncclDataType_t type) {
    return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16 ||
           type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

bool is_signed_integer(ncclDataType_t type) { return type == ncclInt8 || type == ncclInt32 || type == ncclInt64; }


double element_value(const void* p, ncclDataType_t type) {
    auto read = [p](auto sample) {
        decltype(sample) value;
        std::memcpy(&value, p, sizeof value);
        return value;
    };
    switch (type) {
    case ncclInt8: return read(std::int8_t{});
    case ncclUint8: return read(std::uint8_t{});
    case ncclInt32: return read(std::int32_t{});
    case ncclUint32: return read(std::uint32_t{});
    case ncclInt64: return static_cast<double>(read(std::int64_t{}));
    case ncclUint64: return static_cast<double>(read(std::uint64_t{}));
    case ncclFloat16: return half_to_float(read(std::uint16_t{}));
    case ncclFloat32: return read(float{});
    case ncclFloat64: return read(double{});
    case ncclBfloat16: return bfloat16_to_float(read(std::uint16_t{}));
    case ncclFloat8e4m3: return e4m3_to_float(read(std::uint8_t{}));
    case ncclFloat8e5m2: return e5m2_to_float(read(std::uint8_t{}));
    default: return 0;
    }
}

namespace {

// Integers wrap around as the GPU's do, without the undefined behaviour of signed overflow.
template <class T>
T add(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
        return a + b;
    }
}

template <class T>
T multiply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
        return a * b;
    }
}

template <class T>
T combine(ncclRedOp_t op, T a, T b) {
    switch (op) {
    case ncclProd: return multiply(a, b);
    case ncclMax:
        if constexpr (std::is_floating_point_v<T>) return std::fmax(a, b);
        else return std::max(a, b);
    case ncclMin:
        if constexpr (std::is_floating_point_v<T>) return std::fmin(a, b);
        else return std::min(a, b);
    default: return add(a, b);
    }
}

// Storage S is what memory holds; arithmetic happens in C and every intermediate result is
// rounded back through S, as each reduction step of the kernel stores its result in S. The
// loops run rank by rank over whole buffers, with the operation chosen outside them, so that the
// compiler can vectorise the common float and integer sums.
template <class S, class C, class Load, class Store, class Combine>
void reduce_ranks(const Reduction& reduction, C factor, const void* const* inputs, int nranks, std::size_t count,
                  S* out, Load load, Store store, Combine combine) {
    const S* first = static_cast<const S*>(inputs[0]);
    if (reduction.premultiply) {
        for (std::size_t i = 0; i < count; ++i) out[i] = store(multiply(load(first[i]), factor));
    } else {
        std::memcpy(out, first, count * sizeof(S));
    }
    for (int rank = 1; rank < nranks; ++rank) {
        const S* in = static_cast<const S*>(inputs[rank]);
        if (reduction.premultiply) {
            for (std::size_t i = 0; i < count; ++i)
                out[i] = store(combine(load(out[i]), load(store(multiply(load(in[i]), factor)))));
        } else {
            for (std::size_t i = 0; i < count; ++i) out[i] = store(combine(load(out[i]), load(in[i])));
        }
    }
    if constexpr (std::is_integral_v<C>) {
        if (reduction.divide_by_ranks)
            for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<S>(out[i] / static_cast<C>(nranks));
    }
}

template <class S, class C, class Load, class Store>
void reduce_as(const Reduction& reduction, double scalar, const void* const* inputs, int nranks, std::size_t count,
               void* out, Load load, Store store) {
    const C factor = load(store(static_cast<C>(scalar)));
    S* result = static_cast<S*>(out);
    switch (reduction.base) {
    case ncclProd:
        return reduce_ranks<S, C>(reduction, factor, inputs, nranks, count, result, load, store,
                                  [](C a, C b) { return multiply(a, b); });
    case ncclMax:
        return reduce_ranks<S, C>(reduction, factor, inputs, nranks, count, result, load, store,
                                  [](C a, C b) { return combine(ncclMax, a, b); });
    case ncclMin:
        return reduce_ranks<S, C>(reduction, factor, inputs, nranks, count, result, load, store,
                                  [](C a, C b) { return combine(ncclMin, a, b); });
    default:
        return reduce_ranks<S, C>(reduction, factor, inputs, nranks, count, result, load, store,
                                  [](C a, C b) { return add(a, b); });
    }
}

template <class T>
void reduce_plain(const Reduction& reduction, double scalar, const void* const* inputs, int nranks, std::size_t count,
                  void* out) {
    auto same = [](T value) { return value; };
    reduce_as<T, T>(reduction, scalar, inputs, nranks, count, out, same, same);
}

template <class Bits, float (*ToFloat)(Bits), Bits (*FromFloat)(float)>
void reduce_narrow(const Reduction& reduction, double scalar, const void* const* inputs, int nranks, std::size_t count,
                   void* out) {
    reduce_as<Bits, float>(reduction, scalar, inputs, nranks, count, out, [](Bits bits) { return ToFloat(bits); },
                           [](float value) { return FromFloat(value); });
}

}  // namespace

void reduce(const Reduction& reduction, double scalar, ncclDataType_t type, const void* const* inputs, int nranks,
            std::size_t count, void* out) {
    switch (type) {
    case ncclInt8: return reduce_plain<std::int8_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclUint8: return reduce_plain<std::uint8_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclInt32: return reduce_plain<std::int32_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclUint32: return reduce_plain<std::uint32_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclInt64: return reduce_plain<std::int64_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclUint64: return reduce_plain<std::uint64_t>(reduction, scalar, inputs, nranks, count, out);
    case ncclFloat32: return reduce_plain<float>(reduction, scalar, inputs, nranks, count, out);
    case ncclFloat64: return reduce_plain<double>(reduction, scalar, inputs, nranks, count, out);
    case ncclFloat16:
        return reduce_narrow<std::uint16_t, half_to_float, float_to_half>(reduction, scalar, inputs, nranks, count, out);
    case ncclBfloat16:
        return reduce_narrow<std::uint16_t, bfloat16_to_float, float_to_bfloat16>(reduction, scalar, inputs, nranks,
                                                                                  count, out);
    case ncclFloat8e4m3:
        return reduce_narrow<std::uint8_t, e4m3_to_float, float_to_e4m3>(reduction, scalar, inputs, nranks, count, out);
    case ncclFloat8e5m2:
        return reduce_narrow<std::uint8_t, e5m2_to_float, float_to_e5m2>(reduction, scalar, inputs, nranks, count, out);
    default: return;
    }
}

}  // namespace mgpu::sim::nccl
