// Barriers, memory fences and warp-level operations of CUDA C++ for simulated kernels.
//
// A thread that reaches __syncthreads is suspended (its fiber waits) until every thread of its
// block has reached the same __syncthreads; warp operations (__syncwarp, __shfl_*_sync,
// __ballot_sync, ...) suspend a thread until the lanes named in its mask have arrived. A block
// whose threads can never all meet (a barrier inside a branch, a thread that returned early)
// ends the grid with a KernelFault that names the kernel, the block and the call sites.
#pragma once

#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "mgpu/sim/block_scheduler.h"

namespace mgpu::sim::kernel {

// The lanes of the calling thread's warp that exist in its block and have not returned.
unsigned active_lanes();

template <class T>
std::uint64_t to_lane_bits(const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                  "warp shuffles move values of at most 8 bytes (int, float, double, long long, ...)");
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}

// Built from ballots and shuffles, so that the lanes meet at every step as on a GPU: the lanes of
// `mask` whose `bits` equal the caller's (__match_any_sync); and the reductions of
// __reduce_*_sync over the 32-bit values of the lanes of `mask`.
unsigned match_lanes(unsigned mask, std::uint64_t bits, const std::source_location& where);
enum class WarpReduction : unsigned char { Add, Min, Max, SignedMin, SignedMax, And, Or, Xor };
unsigned reduce_lanes(unsigned mask, unsigned value, WarpReduction reduction, const std::source_location& where);

template <class T>
T from_lane_bits(std::uint64_t bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}

}  // namespace mgpu::sim::kernel

[[gnu::always_inline]] inline void __syncthreads(std::source_location where = std::source_location::current()) {
    ::mgpu::sim::kernel::wait_at_block_barrier(::mgpu::sim::kernel::BarrierKind::Sync, 1, where);
}
[[gnu::always_inline]] inline int __syncthreads_count(int predicate, std::source_location where = std::source_location::current()) {
    return ::mgpu::sim::kernel::wait_at_block_barrier(::mgpu::sim::kernel::BarrierKind::Count, predicate, where);
}
[[gnu::always_inline]] inline int __syncthreads_and(int predicate, std::source_location where = std::source_location::current()) {
    return ::mgpu::sim::kernel::wait_at_block_barrier(::mgpu::sim::kernel::BarrierKind::And, predicate, where);
}
[[gnu::always_inline]] inline int __syncthreads_or(int predicate, std::source_location where = std::source_location::current()) {
    return ::mgpu::sim::kernel::wait_at_block_barrier(::mgpu::sim::kernel::BarrierKind::Or, predicate, where);
}

[[gnu::always_inline]] inline void __syncwarp(unsigned mask = 0xffffffffu, std::source_location where = std::source_location::current()) {
    ::mgpu::sim::kernel::wait_at_warp_op(::mgpu::sim::kernel::WarpOp::Sync, mask, 0, 0, 32, where);
}

template <class T>
[[gnu::always_inline]] inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32,
              std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return from_lane_bits<T>(wait_at_warp_op(WarpOp::ShuffleIndex, mask, to_lane_bits(var), src_lane, width, where));
}
template <class T>
[[gnu::always_inline]] inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                 std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return from_lane_bits<T>(
        wait_at_warp_op(WarpOp::ShuffleUp, mask, to_lane_bits(var), static_cast<int>(delta), width, where));
}
template <class T>
[[gnu::always_inline]] inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                   std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return from_lane_bits<T>(
        wait_at_warp_op(WarpOp::ShuffleDown, mask, to_lane_bits(var), static_cast<int>(delta), width, where));
}
template <class T>
[[gnu::always_inline]] inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32,
                  std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return from_lane_bits<T>(wait_at_warp_op(WarpOp::ShuffleXor, mask, to_lane_bits(var), lane_mask, width, where));
}

[[gnu::always_inline]] inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return static_cast<unsigned>(wait_at_warp_op(WarpOp::Ballot, mask, predicate != 0, 0, 32, where));
}
[[gnu::always_inline]] inline int __any_sync(unsigned mask, int predicate, std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return static_cast<int>(wait_at_warp_op(WarpOp::Any, mask, predicate != 0, 0, 32, where));
}
[[gnu::always_inline]] inline int __all_sync(unsigned mask, int predicate, std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return static_cast<int>(wait_at_warp_op(WarpOp::All, mask, predicate != 0, 0, 32, where));
}
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value, std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    return match_lanes(mask, to_lane_bits(value), where);
}
// `mask` when every lane of it holds the same value (and *pred = 1), else 0 (and *pred = 0).
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred,
                                 std::source_location where = std::source_location::current()) {
    using namespace ::mgpu::sim::kernel;
    const unsigned present = static_cast<unsigned>(wait_at_warp_op(WarpOp::Ballot, mask, 1, 0, 32, where));
    const bool all = match_lanes(mask, to_lane_bits(value), where) == present;
    *pred = all ? 1 : 0;
    return all ? mask : 0u;
}
#define MGPU_WARP_REDUCE_(name, type, reduction)                                                                \
    inline type name(unsigned mask, type value, std::source_location where = std::source_location::current()) { \
        using namespace ::mgpu::sim::kernel;                                                                    \
        return static_cast<type>(reduce_lanes(mask, static_cast<unsigned>(value), reduction, where));           \
    }
MGPU_WARP_REDUCE_(__reduce_add_sync, unsigned, WarpReduction::Add)
MGPU_WARP_REDUCE_(__reduce_add_sync, int, WarpReduction::Add)
MGPU_WARP_REDUCE_(__reduce_min_sync, unsigned, WarpReduction::Min)
MGPU_WARP_REDUCE_(__reduce_min_sync, int, WarpReduction::SignedMin)
MGPU_WARP_REDUCE_(__reduce_max_sync, unsigned, WarpReduction::Max)
MGPU_WARP_REDUCE_(__reduce_max_sync, int, WarpReduction::SignedMax)
MGPU_WARP_REDUCE_(__reduce_and_sync, unsigned, WarpReduction::And)
MGPU_WARP_REDUCE_(__reduce_or_sync, unsigned, WarpReduction::Or)
MGPU_WARP_REDUCE_(__reduce_xor_sync, unsigned, WarpReduction::Xor)
#undef MGPU_WARP_REDUCE_
inline unsigned __activemask() { return ::mgpu::sim::kernel::active_lanes(); }

// One thread runs at a time and nothing is reordered across a call into the scheduler, so a
// fence only has to keep the compiler from moving memory accesses across it.
inline void __threadfence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
