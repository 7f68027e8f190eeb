// __device__ and __constant__ variables: each device's copy, made from the variable's initial
// value the first time the device needs it (a kernel on it, or host code naming the variable while
// it is current), as a GPU loads a module's globals with its context; and the runtime calls that
// reach the copies (cudaMemcpyToSymbol, cudaGetSymbolAddress, ...).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "api_call.h"
#include "copy_plan.h"
#include "cuda_runtime_api.h"
#include "memory/memory.h"
#include "mgpu/sim/device_symbol.h"
#include "symbols.h"

using mgpu::sim::DeviceSymbolBase;
using mgpu::sim::Site;
using namespace mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

// The variables the program has used so far, each listed at its first use (their constructors run
// no code: see device_symbol.h).
std::vector<const DeviceSymbolBase*>& registry() {
    static std::vector<const DeviceSymbolBase*> symbols;
    return symbols;
}

void list(const DeviceSymbolBase& symbol) {
    if (symbol.listed) return;
    symbol.listed = true;
    registry().push_back(&symbol);
}

// Gives the device its copy of the variable, holding the declared value. `guarded`: the device's
// memory is closed to this thread, as outside a kernel.
void load(const DeviceSymbolBase& symbol, int device, bool guarded) {
    if (symbol.copies[device] != nullptr) return;
    void* copy = mem::symbol_alloc(device, symbol.size(), symbol.name(), symbol.declared());
    if (copy == nullptr) return;   // a device full to the last byte: the variable stays unloaded
    if (guarded) {
        mem::Violation violation;
        mem::run_guarded(mem::kAllDevices, [&] { std::memcpy(copy, symbol.initial(), symbol.size()); }, &violation);
    } else {
        std::memcpy(copy, symbol.initial(), symbol.size());
    }
    symbol.copies[device] = copy;
}

}  // namespace

namespace mgpu::sim {

thread_local constinit int symbol_grid_device = -1;

void* DeviceSymbolBase::host_address() const {
    std::lock_guard lock(runtime().mutex);
    ensure_up();
    list(*this);
    const int device = current_device();
    // Without a usable device the calls that take the variable fail before they touch it.
    if (machine_status() != cudaSuccess || !valid_device(device) || device >= kMaxSymbolDevices)
        return const_cast<void*>(initial_);
    load(*this, device, true);
    return copies[device] != nullptr ? copies[device] : const_cast<void*>(initial_);
}

// A kernel's first use of the variable on its device: the device's memory is open to the kernel.
void* DeviceSymbolBase::device_address(int device) const {
    std::lock_guard lock(runtime().mutex);
    list(*this);
    load(*this, device, false);
    return copies[device] != nullptr ? copies[device] : const_cast<void*>(initial_);
}

}  // namespace mgpu::sim

namespace mgpu::sim::rt {

void unload_symbols(int device) {
    if (device < 0 || device >= kMaxSymbolDevices) return;
    for (const DeviceSymbolBase* symbol : registry()) {
        if (symbol->copies[device] != nullptr) mem::symbol_free(symbol->copies[device]);
        symbol->copies[device] = nullptr;
    }
}

void forget_symbols() {
    for (const DeviceSymbolBase* symbol : registry())
        std::fill(std::begin(symbol->copies), std::end(symbol->copies), nullptr);
}

// The memory guard tells at most kMaxSymbolDevices devices apart, so no machine has more.
SymbolGrid::SymbolGrid(int device) : previous_(symbol_grid_device) {
    symbol_grid_device = device < kMaxSymbolDevices ? device : -1;
}

SymbolGrid::~SymbolGrid() { symbol_grid_device = previous_; }

}  // namespace mgpu::sim::rt

namespace {

// The variable whose copy (on any device) contains `address`: host code names a variable by the
// copy of the device that was current when it took the address.
const DeviceSymbolBase* find_symbol(const void* address) {
    const auto* byte = static_cast<const char*>(address);
    for (const DeviceSymbolBase* symbol : registry()) {
        for (const void* copy : symbol->copies) {
            const auto* base = static_cast<const char*>(copy);
            if (copy != nullptr && byte >= base && byte < base + std::max<std::size_t>(symbol->size(), 1))
                return symbol;
        }
    }
    return nullptr;
}

// The current device's copy of the variable `symbol` names, after the checks every call makes.
cudaError_t resolve(const void* symbol, char** copy, const DeviceSymbolBase** found) {
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return status;
    *found = symbol == nullptr ? nullptr : find_symbol(symbol);
    if (*found == nullptr) return cudaErrorInvalidSymbol;
    ensure_context(device);
    load(**found, device, true);
    *copy = static_cast<char*>((*found)->copies[device]);
    return *copy == nullptr ? cudaErrorMemoryAllocation : cudaSuccess;
}

cudaError_t to_symbol_call(const char* name, const void* symbol, const void* src, size_t count, size_t offset,
                           cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread_default, Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("symbol", symbol).arg("src", src).arg("count", static_cast<long long>(count));
    call.arg("offset", static_cast<long long>(offset)).arg_named("kind", kind, memcpy_kind_name(kind));
    if (async) call.arg_stream("stream", stream, per_thread_default);
    else call.on_stream(nullptr, per_thread_default);
    char* copy = nullptr;
    const DeviceSymbolBase* found = nullptr;
    if (cudaError_t status = resolve(symbol, &copy, &found); status != cudaSuccess) return call.done(status);
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return call.done(cudaErrorInvalidMemcpyDirection);
    if (offset > found->size() || count > found->size() - offset) return call.done(cudaErrorInvalidValue);
    return finish_memcpy(call, {name, copy + offset, src, count, {}, kind, stream, async, per_thread_default});
}

cudaError_t from_symbol_call(const char* name, void* dst, const void* symbol, size_t count, size_t offset,
                             cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread_default, Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("dst", dst).arg("symbol", symbol).arg("count", static_cast<long long>(count));
    call.arg("offset", static_cast<long long>(offset)).arg_named("kind", kind, memcpy_kind_name(kind));
    if (async) call.arg_stream("stream", stream, per_thread_default);
    else call.on_stream(nullptr, per_thread_default);
    char* copy = nullptr;
    const DeviceSymbolBase* found = nullptr;
    if (cudaError_t status = resolve(symbol, &copy, &found); status != cudaSuccess) return call.done(status);
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return call.done(cudaErrorInvalidMemcpyDirection);
    if (offset > found->size() || count > found->size() - offset) return call.done(cudaErrorInvalidValue);
    return finish_memcpy(call, {name, dst, copy + offset, count, {}, kind, stream, async, per_thread_default});
}

}  // namespace

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                               Site site) {
    return to_symbol_call("cudaMemcpyToSymbol", symbol, src, count, offset, kind, nullptr, false, false, site);
}

cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return to_symbol_call("cudaMemcpyToSymbolAsync", symbol, src, count, offset, kind, stream, true, false, site);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                                 Site site) {
    return from_symbol_call("cudaMemcpyFromSymbol", dst, symbol, count, offset, kind, nullptr, false, false, site);
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return from_symbol_call("cudaMemcpyFromSymbolAsync", dst, symbol, count, offset, kind, stream, true, false, site);
}

cudaError_t mgpu_ptds_cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, Site site) {
    return to_symbol_call("cudaMemcpyToSymbol", symbol, src, count, offset, kind, nullptr, false, true, site);
}

cudaError_t mgpu_ptds_cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                              cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return to_symbol_call("cudaMemcpyToSymbolAsync", symbol, src, count, offset, kind, stream, true, true, site);
}

cudaError_t mgpu_ptds_cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, Site site) {
    return from_symbol_call("cudaMemcpyFromSymbol", dst, symbol, count, offset, kind, nullptr, false, true, site);
}

cudaError_t mgpu_ptds_cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                                cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return from_symbol_call("cudaMemcpyFromSymbolAsync", dst, symbol, count, offset, kind, stream, true, true, site);
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol, Site site) {
    ApiCall call("cudaGetSymbolAddress", site);
    call.arg("devPtr", devPtr).arg("symbol", symbol);
    char* copy = nullptr;
    const DeviceSymbolBase* found = nullptr;
    if (cudaError_t status = resolve(symbol, &copy, &found); status != cudaSuccess) return call.done(status);
    if (devPtr == nullptr) return call.done(cudaErrorInvalidValue);
    *devPtr = copy;
    call.set_output("cudaGetSymbolAddress(" + std::string(found->name()) + ") -> " + hex_pointer(copy));
    return call.done(cudaSuccess);
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol, Site site) {
    ApiCall call("cudaGetSymbolSize", site);
    call.arg("size", size).arg("symbol", symbol);
    char* copy = nullptr;
    const DeviceSymbolBase* found = nullptr;
    if (cudaError_t status = resolve(symbol, &copy, &found); status != cudaSuccess) return call.done(status);
    if (size == nullptr) return call.done(cudaErrorInvalidValue);
    *size = found->size();
    return call.done(cudaSuccess);
}
