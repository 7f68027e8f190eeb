#include "collective_data.h"

#include <cstring>

#include "element_types.h"
#include "memory/memory.h"
#include "mgpu/sim/nccl_control.h"

namespace mgpu::sim::nccl {

namespace {

char* at(void* base, std::size_t offset) { return static_cast<char*>(base) + offset; }

// Buffers the operation stages through, sized before the guarded body runs: a body abandoned
// at a fault does not run destructors.
std::size_t staging_bytes(const MatchedOp& op) {
    const std::size_t n = op.parts.size();
    const std::size_t bytes = op.count * type_size(op.type);
    switch (op.func) {
    case Func::AllReduce: case Func::Reduce: case Func::Broadcast: return bytes;
    case Func::AllGather: case Func::ReduceScatter: case Func::Gather: case Func::Scatter: return bytes * n;
    case Func::AlltoAll: return bytes * n * n;
    case Func::Send: case Func::Recv: return bytes;
    }
    return 0;
}

void run(const MatchedOp& op, char* staging) {
    const int n = static_cast<int>(op.parts.size());
    const std::size_t bytes = op.count * type_size(op.type);
    const auto& parts = op.parts;
    double scalar = op.reduction.host_scalar;
    if (op.reduction.premultiply && op.reduction.scalar_on_device)
        scalar = element_value(op.reduction.device_scalar, op.type);
    std::vector<const void*> inputs(static_cast<std::size_t>(n));
    switch (op.func) {
    case Func::AllReduce:
    case Func::Reduce:
        for (int r = 0; r < n; ++r) inputs[r] = parts[r].send;
        reduce(op.reduction, scalar, op.type, inputs.data(), n, op.count, staging);
        for (int r = 0; r < n; ++r)
            if (op.func == Func::AllReduce || r == op.root) std::memcpy(parts[r].recv, staging, bytes);
        return;
    case Func::Broadcast:
        std::memcpy(staging, parts[op.root].send, bytes);
        for (int r = 0; r < n; ++r) std::memcpy(parts[r].recv, staging, bytes);
        return;
    case Func::AllGather:
        for (int r = 0; r < n; ++r) std::memcpy(staging + r * bytes, parts[r].send, bytes);
        for (int r = 0; r < n; ++r) std::memcpy(parts[r].recv, staging, bytes * n);
        return;
    case Func::ReduceScatter:
        for (int r = 0; r < n; ++r) inputs[r] = parts[r].send;
        reduce(op.reduction, scalar, op.type, inputs.data(), n, op.count * n, staging);
        for (int r = 0; r < n; ++r) std::memcpy(parts[r].recv, staging + r * bytes, bytes);
        return;
    case Func::AlltoAll:
        // Block (source k, destination r) of the whole exchange.
        for (int k = 0; k < n; ++k) std::memcpy(staging + k * n * bytes, parts[k].send, n * bytes);
        for (int r = 0; r < n; ++r)
            for (int k = 0; k < n; ++k) std::memcpy(at(parts[r].recv, k * bytes), staging + (k * n + r) * bytes, bytes);
        return;
    case Func::Gather:
        for (int r = 0; r < n; ++r) std::memcpy(staging + r * bytes, parts[r].send, bytes);
        std::memcpy(parts[op.root].recv, staging, n * bytes);
        return;
    case Func::Scatter:
        std::memcpy(staging, parts[op.root].send, n * bytes);
        for (int r = 0; r < n; ++r) std::memcpy(parts[r].recv, staging + r * bytes, bytes);
        return;
    case Func::Send:
    case Func::Recv:
        std::memcpy(staging, parts[0].send, bytes);
        std::memcpy(parts[1].recv, staging, bytes);
        return;
    }
}

bool data_movement = true;

}  // namespace

bool move_data(const MatchedOp& op) {
    if (op.count == 0 || !data_movement) return true;
    std::vector<char> staging(staging_bytes(op));
    mem::Violation violation;
    return mem::run_guarded(mem::kAllDevices, [&] { run(op, staging.data()); }, &violation);
}

}  // namespace mgpu::sim::nccl

void mgpu::sim::set_nccl_data_movement(bool move) { nccl::data_movement = move; }
