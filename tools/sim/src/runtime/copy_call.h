// The common part of every call that copies memory with cudaMemcpy's rules, shared by cudaMemcpy*
// and the calls that copy to and from device variables (cudaMemcpyToSymbol, ...).
#pragma once

#include <cstddef>

#include "api_call.h"
#include "mgpu/sim/types.h"

namespace mgpu::sim::rt {

// "cudaMemcpyHostToDevice", ..., or "invalid".
const char* memcpy_kind_name(int kind);

// Checks the copy of `count` bytes against the kind and the current device, queues it on the
// stream (the legacy or per-thread default stream unless `async`) and makes the host wait as
// cudaMemcpy or cudaMemcpyAsync would; finishes `call` with the result. `name` is the call's name
// as the copy's operation records it.
cudaError_t finish_memcpy_call(ApiCall& call, const char* name, void* dst, const void* src, std::size_t count,
                               cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread_default);

}  // namespace mgpu::sim::rt
