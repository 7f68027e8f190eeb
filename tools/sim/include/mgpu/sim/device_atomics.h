// CUDA's atomic functions for simulated kernels, with CUDA's signatures and results (each
// returns the value the memory held before the operation).
//
// They are plain read-modify-write sequences, and that is atomic here: device work runs on one
// host thread at a time, and a simulated thread only gives way to another at a barrier or warp
// operation, never in the middle of one of these functions.
#pragma once

namespace mgpu::sim::kernel {

template <class T, class Update>
inline T read_modify_write(T* address, Update update) {
    T old = *address;
    *address = update(old);
    return old;
}

}  // namespace mgpu::sim::kernel

#define MGPU_ATOMIC_(name, type, expression)                                          \
    inline type name(type* address, type val) {                                      \
        return ::mgpu::sim::kernel::read_modify_write(                                \
            address, [val]([[maybe_unused]] type old) -> type { return expression; }); \
    }

MGPU_ATOMIC_(atomicAdd, int, old + val)
MGPU_ATOMIC_(atomicAdd, unsigned int, old + val)
MGPU_ATOMIC_(atomicAdd, unsigned long long int, old + val)
MGPU_ATOMIC_(atomicAdd, float, old + val)
MGPU_ATOMIC_(atomicAdd, double, old + val)

MGPU_ATOMIC_(atomicSub, int, old - val)
MGPU_ATOMIC_(atomicSub, unsigned int, old - val)

MGPU_ATOMIC_(atomicExch, int, val)
MGPU_ATOMIC_(atomicExch, unsigned int, val)
MGPU_ATOMIC_(atomicExch, unsigned long long int, val)
MGPU_ATOMIC_(atomicExch, float, val)

MGPU_ATOMIC_(atomicMin, int, val < old ? val : old)
MGPU_ATOMIC_(atomicMin, unsigned int, val < old ? val : old)
MGPU_ATOMIC_(atomicMin, unsigned long long int, val < old ? val : old)
MGPU_ATOMIC_(atomicMin, long long int, val < old ? val : old)
MGPU_ATOMIC_(atomicMax, int, val > old ? val : old)
MGPU_ATOMIC_(atomicMax, unsigned int, val > old ? val : old)
MGPU_ATOMIC_(atomicMax, unsigned long long int, val > old ? val : old)
MGPU_ATOMIC_(atomicMax, long long int, val > old ? val : old)

// atomicInc wraps to 0 after reaching val; atomicDec wraps to val after 0 (or when above val).
MGPU_ATOMIC_(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
MGPU_ATOMIC_(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)

MGPU_ATOMIC_(atomicAnd, int, old & val)
MGPU_ATOMIC_(atomicAnd, unsigned int, old & val)
MGPU_ATOMIC_(atomicAnd, unsigned long long int, old & val)
MGPU_ATOMIC_(atomicOr, int, old | val)
MGPU_ATOMIC_(atomicOr, unsigned int, old | val)
MGPU_ATOMIC_(atomicOr, unsigned long long int, old | val)
MGPU_ATOMIC_(atomicXor, int, old ^ val)
MGPU_ATOMIC_(atomicXor, unsigned int, old ^ val)
MGPU_ATOMIC_(atomicXor, unsigned long long int, old ^ val)

#undef MGPU_ATOMIC_

#define MGPU_ATOMIC_CAS_(type)                                                                 \
    inline type atomicCAS(type* address, type compare, type val) {                            \
        return ::mgpu::sim::kernel::read_modify_write(                                         \
            address, [compare, val](type old) -> type { return old == compare ? val : old; }); \
    }

MGPU_ATOMIC_CAS_(int)
MGPU_ATOMIC_CAS_(unsigned int)
MGPU_ATOMIC_CAS_(unsigned long long int)
MGPU_ATOMIC_CAS_(unsigned short int)

#undef MGPU_ATOMIC_CAS_

// The _block and _system scoped forms behave as the plain ones: there is one simulated device
// thread running at any moment, so every scope sees the same order.
#define MGPU_ATOMIC_SCOPES_(name)                                          \
    template <class T, class... Rest>                                      \
    inline auto name##_block(T* address, Rest... rest) {                   \
        return name(address, rest...);                                     \
    }                                                                      \
    template <class T, class... Rest>                                      \
    inline auto name##_system(T* address, Rest... rest) {                  \
        return name(address, rest...);                                     \
    }

MGPU_ATOMIC_SCOPES_(atomicAdd)
MGPU_ATOMIC_SCOPES_(atomicSub)
MGPU_ATOMIC_SCOPES_(atomicExch)
MGPU_ATOMIC_SCOPES_(atomicMin)
MGPU_ATOMIC_SCOPES_(atomicMax)
MGPU_ATOMIC_SCOPES_(atomicInc)
MGPU_ATOMIC_SCOPES_(atomicDec)
MGPU_ATOMIC_SCOPES_(atomicCAS)
MGPU_ATOMIC_SCOPES_(atomicAnd)
MGPU_ATOMIC_SCOPES_(atomicOr)
MGPU_ATOMIC_SCOPES_(atomicXor)

#undef MGPU_ATOMIC_SCOPES_
