// What the NCCL conformance tests share: communicators over a preset machine, per-rank device
// buffers, and elements of every NCCL datatype written and read by the test's own encoding.
//
// Expected results are computed here on the host, from NCCL's documented semantics, never by
// the simulator. Values are chosen so that every partial sum and product is exactly
// representable in the datatype (small integers), so a result is exact whatever order the
// reduction runs in and can be compared bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <doctest/doctest.h>
#include <nccl.h>

#include "conformance_support.h"

namespace nccl_tests {

inline const std::vector<ncclDataType_t> kAllTypes = {
    ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64,
    ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
inline const std::vector<ncclRedOp_t> kBuiltinOps = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};

inline std::size_t size_of(ncclDataType_t type) {
    switch (type) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
    }
}

inline bool is_float(ncclDataType_t type) {
    return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16 ||
           type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

inline bool is_unsigned(ncclDataType_t type) {
    return type == ncclUint8 || type == ncclUint32 || type == ncclUint64;
}

// Exponent and mantissa widths of the narrow floating formats (IEEE half, bfloat16, OCP FP8).
struct Narrow {
    int exponent_bits;
    int mantissa_bits;
};

inline Narrow narrow_format(ncclDataType_t type) {
    switch (type) {
    case ncclFloat16: return {5, 10};
    case ncclBfloat16: return {8, 7};
    case ncclFloat8e4m3: return {4, 3};
    default: return {5, 2};   // ncclFloat8e5m2
    }
}

// An integer value as a normal number of the narrow format; the value must be exact in it.
inline std::uint32_t narrow_bits(long long value, Narrow f) {
    if (value == 0) return 0;
    const std::uint32_t sign = value < 0 ? 1u << (f.exponent_bits + f.mantissa_bits) : 0u;
    unsigned long long magnitude = static_cast<unsigned long long>(value < 0 ? -value : value);
    int exponent = 0;
    while ((magnitude >> (exponent + 1)) != 0) ++exponent;
    const unsigned long long leading = 1ull << exponent;
    const unsigned long long fraction = magnitude - leading;
    if (exponent > f.mantissa_bits && (fraction & ((1ull << (exponent - f.mantissa_bits)) - 1)) != 0)
        throw std::logic_error("value not exact in the format");
    const unsigned long long mantissa =
        exponent >= f.mantissa_bits ? fraction >> (exponent - f.mantissa_bits) : fraction << (f.mantissa_bits - exponent);
    const int bias = (1 << (f.exponent_bits - 1)) - 1;
    return sign | (static_cast<std::uint32_t>(exponent + bias) << f.mantissa_bits) | static_cast<std::uint32_t>(mantissa);
}

// Writes `value` (exact in the type) as element i of a buffer of `type`.
inline void put(std::vector<unsigned char>& buffer, ncclDataType_t type, std::size_t i, double value) {
    unsigned char* at = buffer.data() + i * size_of(type);
    auto store = [at](auto v) { std::memcpy(at, &v, sizeof v); };
    switch (type) {
    case ncclInt8: store(static_cast<std::int8_t>(value)); break;
    case ncclUint8: store(static_cast<std::uint8_t>(static_cast<long long>(value))); break;
    case ncclInt32: store(static_cast<std::int32_t>(value)); break;
    case ncclUint32: store(static_cast<std::uint32_t>(static_cast<long long>(value))); break;
    case ncclInt64: store(static_cast<std::int64_t>(value)); break;
    case ncclUint64: store(static_cast<std::uint64_t>(static_cast<long long>(value))); break;
    case ncclFloat32: store(static_cast<float>(value)); break;
    case ncclFloat64: store(value); break;
    case ncclFloat16: case ncclBfloat16:
        store(static_cast<std::uint16_t>(narrow_bits(static_cast<long long>(value), narrow_format(type))));
        break;
    default: store(static_cast<std::uint8_t>(narrow_bits(static_cast<long long>(value), narrow_format(type)))); break;
    }
}

// A normal or subnormal number of the narrow format as a double.
inline double narrow_value(std::uint32_t bits, Narrow f) {
    const bool negative = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1u;
    const int exponent = static_cast<int>((bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1));
    const double mantissa = bits & ((1u << f.mantissa_bits) - 1);
    const int bias = (1 << (f.exponent_bits - 1)) - 1;
    const double value = exponent == 0 ? std::ldexp(mantissa, 1 - bias - f.mantissa_bits)
                                       : std::ldexp(1.0 + std::ldexp(mantissa, -f.mantissa_bits), exponent - bias);
    return negative ? -value : value;
}

// Element i of a buffer of `type`, as a double.
inline double get(const std::vector<unsigned char>& buffer, ncclDataType_t type, std::size_t i) {
    const unsigned char* at = buffer.data() + i * size_of(type);
    auto load = [at](auto sample) {
        decltype(sample) v;
        std::memcpy(&v, at, sizeof v);
        return v;
    };
    switch (type) {
    case ncclInt8: return load(std::int8_t{});
    case ncclUint8: return load(std::uint8_t{});
    case ncclInt32: return load(std::int32_t{});
    case ncclUint32: return load(std::uint32_t{});
    case ncclInt64: return static_cast<double>(load(std::int64_t{}));
    case ncclUint64: return static_cast<double>(load(std::uint64_t{}));
    case ncclFloat32: return load(float{});
    case ncclFloat64: return load(double{});
    case ncclFloat16: case ncclBfloat16: return narrow_value(load(std::uint16_t{}), narrow_format(type));
    default: return narrow_value(load(std::uint8_t{}), narrow_format(type));
    }
}

inline std::vector<unsigned char> encode(ncclDataType_t type, const std::vector<double>& values) {
    std::vector<unsigned char> bytes(values.size() * size_of(type));
    for (std::size_t i = 0; i < values.size(); ++i) put(bytes, type, i, values[i]);
    return bytes;
}

// Small integers, never all zero, chosen so that `nranks` of them stay exact under `op` in `type`.
inline std::vector<double> operand_values(ncclDataType_t type, ncclRedOp_t op, int nranks, std::size_t count,
                                          std::uint32_t seed) {
    std::mt19937 generator(seed);
    int low = -3, high = 3;
    if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2) low = -1, high = 1;   // sums of 8 within 8
    if (op == ncclProd) low = -1, high = 2;                                     // products within 2^8
    if (is_unsigned(type)) low = 0;
    if (op == ncclAvg) low = 0, high = 7;   // sums of up to 8 ranks stay below 64, exact in every format
    std::uniform_int_distribution<int> pick(low, high);
    std::vector<double> values(count);
    for (double& v : values) {
        v = pick(generator);
        if (op == ncclProd && v == 0) v = 1;
    }
    (void)nranks;
    return values;
}

// The reduction of one element across ranks, as NCCL defines each operation.
inline double reduce_reference(ncclDataType_t type, ncclRedOp_t op, const std::vector<double>& per_rank) {
    double result = per_rank.front();
    for (std::size_t r = 1; r < per_rank.size(); ++r) {
        switch (op) {
        case ncclProd: result *= per_rank[r]; break;
        case ncclMax: result = std::max(result, per_rank[r]); break;
        case ncclMin: result = std::min(result, per_rank[r]); break;
        default: result += per_rank[r]; break;
        }
    }
    if (op == ncclAvg) {
        const double n = static_cast<double>(per_rank.size());
        result = is_float(type) ? result / n : std::trunc(result / n);   // integers: sum, then divide
    }
    return result;
}

// Device memory of `bytes` on `device`, freed at scope exit.
class DeviceBuffer {
public:
    DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
        int previous = 0;
        cudaGetDevice(&previous);
        cudaSetDevice(device);
        REQUIRE(cudaMalloc(&pointer_, bytes == 0 ? 1 : bytes) == cudaSuccess);
        cudaSetDevice(previous);
    }
    ~DeviceBuffer() {
        if (pointer_) cudaFree(pointer_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : device_(other.device_), bytes_(other.bytes_), pointer_(std::exchange(other.pointer_, nullptr)) {}

    void* get() const { return pointer_; }
    unsigned char* bytes_at(std::size_t offset) const { return static_cast<unsigned char*>(pointer_) + offset; }
    void upload(const std::vector<unsigned char>& data, std::size_t offset = 0) const {
        REQUIRE(cudaMemcpy(bytes_at(offset), data.data(), data.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    }
    std::vector<unsigned char> download(std::size_t bytes, std::size_t offset = 0) const {
        std::vector<unsigned char> data(bytes);
        REQUIRE(cudaMemcpy(data.data(), bytes_at(offset), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        return data;
    }
    void fill(unsigned char value) const { REQUIRE(cudaMemset(pointer_, value, bytes_) == cudaSuccess); }

private:
    int device_ = 0;
    std::size_t bytes_ = 0;
    void* pointer_ = nullptr;
};

// Communicators over devices 0..n-1 made with ncclCommInitAll, destroyed at scope exit.
class Comms {
public:
    explicit Comms(int n) : comms_(n, nullptr) {
        REQUIRE(ncclCommInitAll(comms_.data(), n, nullptr) == ncclSuccess);
    }
    ~Comms() {
        for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
    }
    Comms(const Comms&) = delete;
    Comms& operator=(const Comms&) = delete;
    ncclComm_t operator[](int rank) const { return comms_[rank]; }
    int size() const { return static_cast<int>(comms_.size()); }

private:
    std::vector<ncclComm_t> comms_;
};

}  // namespace nccl_tests
