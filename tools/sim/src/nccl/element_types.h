// NCCL's element types on the host: sizes, names, the conversions of the 16- and 8-bit floating
// formats, and reductions done one step at a time in the element's own precision, as a GPU
// kernel adds two halves and rounds the result to a half before the next addition.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm_state.h"
#include "mgpu/sim/float_formats.h"
#include "nccl.h"

namespace mgpu::sim::nccl {

bool valid_type(int type);
std::size_t type_size(ncclDataType_t type);
const char* type_name(ncclDataType_t type);    // "ncclFloat32"
const char* op_name(ncclRedOp_t op);           // "ncclSum", or "premulsum" for made operations
bool is_floating(ncclDataType_t type);
bool is_signed_integer(ncclDataType_t type);

// IEEE binary16, bfloat16 and the two OCP 8-bit formats, rounded to nearest even: the
// conversions cuda_fp16.h and cuda_bf16.h use too (mgpu/sim/float_formats.h).
using formats::bfloat16_to_float;
using formats::e4m3_to_float;
using formats::e5m2_to_float;
using formats::float_to_e4m3;
using formats::float_to_e5m2;
using formats::half_to_float;
inline std::uint16_t float_to_half(float value) { return formats::float_to_half(value); }
inline std::uint16_t float_to_bfloat16(float value) { return formats::float_to_bfloat16(value); }

// The value of one element of `type` at p (a pre-multiplication scalar).
double element_value(const void* p, ncclDataType_t type);

// Reduces `inputs` (one pointer per rank, each `count` elements of `type`) into `out`, rank 0's
// values first, applying the reduction's pre-multiplication and final division. `scalar` is the
// pre-multiplier already read (host or device). `out` may not alias any input.
void reduce(const Reduction& reduction, double scalar, ncclDataType_t type, const void* const* inputs, int nranks,
            std::size_t count, void* out);

}  // namespace mgpu::sim::nccl
