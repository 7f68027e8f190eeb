// `__device__` and `__constant__` variables at namespace scope. On a GPU each device holds its
// own copy of every such variable (loaded with the module, initialised from the declaration): a
// kernel on device 1 reads device 1's copy, and cudaMemcpyToSymbol writes the copy of the
// calling thread's current device. cu2cpp rewrites
//
//     __constant__ float coefficients[16] = {1, 2};
//
// into a host variable holding the initial value and a DeviceSymbol that knows where each
// device's copy is, on the same line:
//
//     float mgpu_initial_coefficients[16] = {1, 2};
//     ::mgpu::sim::DeviceSymbol<decltype(mgpu_initial_coefficients), true>
//         mgpu_symbol_coefficients{"coefficients", &mgpu_initial_coefficients, Site{file, line}};
//
// and every later use of `coefficients` into `mgpu_symbol_coefficients.get()`: the copy of the
// device whose grid is running on this host thread, or in host code (cudaMemcpyToSymbol(
// coefficients, ...), sizeof, &) the copy of the current device. The copies live in the devices'
// memory, so host code that reads one directly faults as it would read any device memory, and
// cudaGetSymbolAddress gives an ordinary device pointer.
#pragma once

#include <cstddef>

#include "mgpu/sim/site.h"

namespace mgpu::sim {

// The device whose grid runs on this host thread (set by the runtime around each grid); -1 while
// none does.
extern thread_local constinit int symbol_grid_device;

// As many devices as the memory guard can tell apart (a 64-bit mask).
inline constexpr int kMaxSymbolDevices = 64;

// Constant-initialised, with nothing to destroy, so that a program's variables run no code before
// main (the checker refuses student files that do): each variable joins the runtime's list the
// first time it is used, and a device gets its copy then.
class DeviceSymbolBase {
public:
    constexpr DeviceSymbolBase(const char* name, const void* initial, std::size_t size, bool constant, Site declared)
        : name_(name), initial_(initial), size_(size), constant_(constant), declared_(declared) {}
    DeviceSymbolBase(const DeviceSymbolBase&) = delete;
    DeviceSymbolBase& operator=(const DeviceSymbolBase&) = delete;

    const char* name() const { return name_; }
    const void* initial() const { return initial_; }
    std::size_t size() const { return size_; }
    bool constant() const { return constant_; }
    Site declared() const { return declared_; }

    // Kept by the runtime: each device's copy (null until the device first needs it, and again
    // when that device's memory goes away), and whether the runtime lists the variable.
    mutable void* copies[kMaxSymbolDevices] = {};
    mutable bool listed = false;

protected:
    // The copy a grid on this host thread uses, or in host code the current device's copy.
    [[gnu::always_inline]] void* address() const {
        const int device = symbol_grid_device;
        if (device >= 0) [[likely]] {
            if (void* copy = copies[device]) [[likely]]
                return copy;
            return device_address(device);
        }
        return host_address();
    }

private:
    void* host_address() const;
    void* device_address(int device) const;

    const char* name_;
    const void* initial_;
    std::size_t size_;
    bool constant_;
    Site declared_;
};

// Constant: declared __constant__. Its type stays as declared (not const), since CUDA C++ lets
// code pass a __constant__ array where a plain pointer is expected.
template <class T, bool Constant>
class DeviceSymbol : public DeviceSymbolBase {
public:
    constexpr DeviceSymbol(const char* name, const T* initial, Site declared)
        : DeviceSymbolBase(name, initial, sizeof(T), Constant, declared) {}

    [[gnu::always_inline]] T& get() const { return *static_cast<T*>(address()); }
};

}  // namespace mgpu::sim
