// Kernel launches: the launch template hands a KernelLaunch to submit_kernel, which checks it
// as the hardware does, queues it, and runs the grid under the memory guard when it executes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "api_call.h"
#include "held_kernel_watch.h"
#include "cuda_runtime_api.h"
#include "memory/memory.h"
#include "mgpu/sim/kernel_submit.h"
#include "scheduler.h"
#include "symbols.h"

using mgpu::sim::KernelFault;
using mgpu::sim::KernelLaunch;
using mgpu::sim::Site;
using namespace mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

std::string describe_launch(const KernelLaunch& launch, int device) {
    return "kernel '" + launch.name + "' launched at " + where(launch.site) + " on device " + std::to_string(device);
}

std::string describe_allocation(const mem::Allocation& allocation) {
    if (allocation.symbol != nullptr)
        return "device " + std::to_string(allocation.device) + "'s copy of the variable '" + allocation.symbol +
               "' declared at " + where(allocation.site);
    return "the " + std::to_string(allocation.size) + "-byte allocation made by cudaMalloc at " +
           where(allocation.site) + " on device " + std::to_string(allocation.device);
}

// What a student must do so that `device` may reach `owner`'s memory.
std::string peer_advice(int device, int owner) {
    std::ostringstream text;
    if (can_peer(device, owner)) {
        text << "  Device " << device << " has no peer access to device " << owner << ". Call cudaSetDevice(" << device
             << ") and then cudaDeviceEnablePeerAccess(" << owner << ", 0) before the launch (kernels on device "
             << device << " may then reach device " << owner << "'s memory), or copy the data to device " << device
             << " first.\n";
    } else {
        text << "  Devices " << device << " and " << owner
             << " cannot peer (cudaDeviceCanAccessPeer answers 0): copy the data to device " << device
             << " with cudaMemcpyPeer first.\n";
    }
    return text.str();
}

std::string sticky_note(int device, cudaError_t code) {
    return "  Device " + std::to_string(device) + " now answers " + std::to_string(code) +
           " to every call that uses it, until cudaDeviceReset.\n";
}

void raise_fault(int device, cudaError_t code, const std::string& message) {
    runtime().devices[device].sticky = code;
    mark_op_error(executing_op(), code);
    std::fputs(message.c_str(), stderr);
    std::fflush(stderr);
}

bool one_past_end_of_allocation(const void* p) {
    auto before = mem::find_device(static_cast<const char*>(p) - 1);
    return before && before->base + before->size == reinterpret_cast<std::uintptr_t>(p);
}

struct PointerCheck {
    std::string fault;              // non-empty: the kernel faults when it runs
    bool peer_access = false;       // it reaches another device's memory through peer access
};

// Time the kernel's memory traffic takes, and the part of it spent in the device's own memory
// (what concurrent copies and kernels on that device compete for).
struct KernelTraffic {
    double us = 0;
    double local_us = 0;
};

// How fast a kernel moves its own device's memory through accesses of `width` bytes. Wider accesses
// keep more bytes in flight per thread: on an H200 a kernel of 4-byte loads and stores reaches
// memory_bandwidth_gbps (2.5-2.7 TB/s, read + write), one of 16-byte (float4) accesses the copy
// engine's rate (2 x d2d_copy_gbps, 3.6-4.2 TB/s). Between the two, log-linear in the width.
double local_access_gbps(const mgpu::sim::DeviceSpec& spec, std::size_t width) {
    const double narrow = spec.memory_bandwidth_gbps;
    const double wide = std::max(narrow, 2.0 * spec.d2d_copy_gbps);
    if (width <= 4) return narrow;
    if (width >= 16) return wide;
    const double position = (std::log2(static_cast<double>(width)) - 2.0) / 2.0;   // 4 bytes: 0, 16 bytes: 1
    return narrow * std::pow(wide / narrow, position);
}

// The kernel's time on the device, from the bytes it is expected to move. Each pointer argument
// is taken to cover as many elements as the launch has threads, or as the largest integral argument
// when that is larger (a grid-stride loop over n), clipped to the end of its allocation; a lone
// writable pointer is read and written (x[i] *= a). Bytes on the kernel's own device move at the
// rate of the pointee's width (local_access_gbps), bytes reached through peer access at the link's, page-locked host memory at the
// pinned host rate. Without any pointer argument the model falls back to a fixed traffic per thread.
KernelTraffic kernel_traffic(const KernelLaunch& launch, int device, unsigned long long threads) {
    Runtime& r = runtime();
    const mgpu::sim::CostModel& cost = r.machine.cost;
    const double local_gbps = r.machine.devices[device].memory_bandwidth_gbps;
    const unsigned long long elements = std::max(threads, launch.largest_count);
    KernelTraffic traffic;
    int counted = 0;
    bool lone_writable = false;
    for (std::size_t k = 0; k < launch.pointer_args.size(); ++k) {
        const void* p = launch.pointer_args[k];
        if (p == nullptr) continue;
        const std::size_t element = k < launch.pointee_sizes.size() ? launch.pointee_sizes[k] : 1;
        double bytes = static_cast<double>(elements) * static_cast<double>(element);
        double gbps = local_access_gbps(r.machine.devices[device], element);
        const int owner = mem::device_of(p);
        if (auto allocation = mem::find_device(p)) {
            bytes = std::min(bytes, static_cast<double>(allocation->base + allocation->size -
                                                        reinterpret_cast<std::uintptr_t>(p)));
            if (owner != device && owner >= 0 && r.machine.links[device][owner].gbps > 0)
                gbps = r.machine.links[device][owner].gbps;
        } else if (auto pinned = mem::find_host(p)) {
            bytes = std::min(bytes, static_cast<double>(pinned->base + pinned->size - reinterpret_cast<std::uintptr_t>(p)));
            gbps = cost.h2d_pinned_gbps;
        } else {
            continue;   // a bad pointer: the launch faults, its time does not matter
        }
        traffic.us += bytes / (gbps * 1e3);
        if (owner == device) traffic.local_us += bytes / (gbps * 1e3);
        ++counted;
        lone_writable = k < launch.pointer_writable.size() && launch.pointer_writable[k];
    }
    if (counted == 0) {
        traffic.us = traffic.local_us = static_cast<double>(threads) * cost.kernel_bytes_per_thread / (local_gbps * 1e3);
        return traffic;
    }
    if (counted == 1 && lone_writable) {
        traffic.us *= 2;
        traffic.local_us *= 2;
    }
    return traffic;
}

// The bytes each pointer argument covers: from the pointer over the largest integral argument's
// count of elements (the n of a grid-stride loop), or one per thread without one, clipped to its
// allocation. Exact for the usual `p[i]`, i < n, over a chunk passed as `base + first`, however
// many threads the grid has; a kernel that indexes past its n is covered only in part.
std::vector<mgpu::trace::MemoryRange> kernel_touches(const KernelLaunch& launch, unsigned long long threads) {
    std::vector<mgpu::trace::MemoryRange> touches;
    const unsigned long long elements = launch.largest_count > 0 ? launch.largest_count : threads;
    for (std::size_t k = 0; k < launch.pointer_args.size(); ++k) {
        const void* p = launch.pointer_args[k];
        if (p == nullptr) continue;
        const auto begin = reinterpret_cast<std::uintptr_t>(p);
        std::uintptr_t limit = 0;
        std::uint64_t serial = 0;
        if (auto allocation = mem::find_device(p)) {
            limit = allocation->base + allocation->size;
            serial = allocation->serial;
        } else if (auto pinned = mem::find_host(p)) {
            limit = pinned->base + pinned->size;
        } else {
            continue;
        }
        const std::size_t element = k < launch.pointee_sizes.size() ? std::max<std::size_t>(launch.pointee_sizes[k], 1) : 1;
        const std::uintptr_t end = begin + std::min<unsigned long long>(elements * element, limit - begin);
        const bool writes = k < launch.pointer_writable.size() && launch.pointer_writable[k];
        touches.push_back({begin, end, writes, serial});
    }
    return touches;
}

// The flag a kernel polls while it holds its stream: a volatile pointer argument into page-locked
// host memory that is all zero at the launch (`while (!*flag)`, the host raises it later). Such a
// kernel is held until the flag changes (Runtime::held_kernels).
std::optional<Runtime::HeldKernel> polled_host_flag(const KernelLaunch& launch) {
    for (std::size_t k = 0; k < launch.pointer_args.size(); ++k) {
        if (k >= launch.pointer_volatile.size() || !launch.pointer_volatile[k]) continue;
        const void* p = launch.pointer_args[k];
        auto pinned = p ? mem::find_host(p) : std::nullopt;
        if (!pinned) continue;
        const std::size_t size = std::min<std::size_t>(
            k < launch.pointee_sizes.size() ? std::max<std::size_t>(launch.pointee_sizes[k], 1) : 1,
            pinned->base + pinned->size - reinterpret_cast<std::uintptr_t>(p));
        Runtime::HeldKernel held;
        held.flag = static_cast<const volatile unsigned char*>(p);
        held.size = size;
        bool zero = true;
        for (std::size_t i = 0; i < size; ++i) zero = zero && held.flag[i] == 0;
        if (zero) return held;
    }
    return std::nullopt;
}

PointerCheck check_pointers(const KernelLaunch& launch, int device) {
    Runtime& r = runtime();
    PointerCheck result;
    for (const void* p : launch.pointer_args) {
        if (p == nullptr) continue;
        const int owner = mem::device_of(p);
        auto allocation = mem::find_device(p);
        std::ostringstream text;
        text << "mgpu-sim: illegal memory access (cudaErrorIllegalAddress, 700) in " << describe_launch(launch, device)
             << ".\n";
        if (owner == device) {
            if (allocation || one_past_end_of_allocation(p)) continue;
            text << "  Its pointer argument " << hex_pointer(p) << " lies in device " << device
                 << "'s memory but in no live allocation: it was freed, or was never returned by cudaMalloc.\n";
        } else if (owner >= 0) {
            if (r.devices[device].peer_enabled[owner]) {
                result.peer_access = true;
                continue;
            }
            text << "  Its pointer argument " << hex_pointer(p) << " lies in "
                 << (allocation ? describe_allocation(*allocation) : "device " + std::to_string(owner) + "'s memory")
                 << ".\n"
                 << peer_advice(device, owner);
        } else {
            if (mem::find_host(p)) continue;   // page-locked host memory is mapped for every device
            text << "  Its pointer argument " << hex_pointer(p)
                 << " is ordinary host memory, which kernels cannot reach. Copy the data to the device with "
                    "cudaMemcpy and pass the device pointer (or allocate it with cudaMallocHost).\n";
        }
        text << sticky_note(device, cudaErrorIllegalAddress);
        result.fault = text.str();
        break;
    }
    return result;
}

std::string describe_violation(const KernelLaunch& launch, int device, const mem::Violation& violation) {
    std::ostringstream text;
    text << "mgpu-sim: illegal memory access (cudaErrorIllegalAddress, 700) in " << describe_launch(launch, device)
         << ".\n  It " << (violation.write ? "wrote to " : "read from ") << hex_pointer(violation.address);
    if (violation.allocation) text << ", inside " << describe_allocation(*violation.allocation);
    else if (violation.owner_device >= 0) text << ", in device " << violation.owner_device << "'s memory";
    text << ".\n";
    if (violation.owner_device >= 0 && violation.owner_device != device) text << peer_advice(device, violation.owner_device);
    text << sticky_note(device, cudaErrorIllegalAddress);
    return text.str();
}

cudaError_t check_configuration(const KernelLaunch& launch, int device) {
    Runtime& r = runtime();
    const mgpu::sim::DeviceSpec& spec = r.machine.devices[device];
    const unsigned block[3] = {launch.block.x, launch.block.y, launch.block.z};
    const unsigned grid[3] = {launch.grid.x, launch.grid.y, launch.grid.z};
    unsigned long long threads = 1;
    for (int i = 0; i < 3; ++i) {
        if (block[i] == 0 || block[i] > static_cast<unsigned>(spec.max_threads_dim[i])) return cudaErrorInvalidValue;
        if (grid[i] == 0 || grid[i] > static_cast<unsigned>(spec.max_grid_size[i])) return cudaErrorInvalidValue;
        threads *= block[i];
    }
    if (threads > static_cast<unsigned long long>(spec.max_threads_per_block)) return cudaErrorInvalidValue;
    std::size_t shared_limit = spec.shared_mem_per_block;
    if (auto it = r.max_dynamic_shared.find(launch.function); launch.function && it != r.max_dynamic_shared.end())
        shared_limit = static_cast<std::size_t>(it->second);
    // The hardware answers 1 for every bad configuration, where the header documents 9.
    if (launch.dynamic_shared > shared_limit) return cudaErrorInvalidValue;
    return cudaSuccess;
}

std::string launch_text(const KernelLaunch& launch, std::uint64_t stream_id) {
    std::ostringstream text;
    text << launch.name << "<<<(" << launch.grid.x << "," << launch.grid.y << "," << launch.grid.z << "), ("
         << launch.block.x << "," << launch.block.y << "," << launch.block.z << "), " << launch.dynamic_shared << ", "
         << (stream_id == 0 ? std::string("0") : "stream#" + std::to_string(stream_id)) << ">>>";
    return text.str();
}

cudaError_t launch_kernel(KernelLaunch&& launch, bool per_thread_default) {
    ApiCall call("cudaLaunchKernel", launch.site, HostCost::Launch);
    call.arg("gridDim.x", launch.grid.x).arg("gridDim.y", launch.grid.y).arg("gridDim.z", launch.grid.z);
    call.arg("blockDim.x", launch.block.x).arg("blockDim.y", launch.block.y).arg("blockDim.z", launch.block.z);
    call.arg("sharedMem", static_cast<long long>(launch.dynamic_shared));
    call.arg_stream("stream", launch.stream, per_thread_default);
    call.set_text(launch_text(launch, stream_trace_id(launch.stream, per_thread_default)));

    Runtime& r = runtime();
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    CUstream_st* stream = resolve_stream(launch.stream, per_thread_default);
    // A stream of another device is not a valid handle for a launch on the current device.
    if (stream == nullptr || stream->device != device) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = check_configuration(launch, device); status != cudaSuccess) return call.done(status);

    const PointerCheck pointers = check_pointers(launch, device);
    std::uint64_t open_devices = std::uint64_t{1} << device;
    for (int peer = 0; peer < device_count(); ++peer)
        if (r.devices[device].peer_enabled[peer]) open_devices |= std::uint64_t{1} << peer;

    const unsigned long long threads = static_cast<unsigned long long>(launch.grid.x) * launch.grid.y *
                                       launch.grid.z * launch.block.x * launch.block.y * launch.block.z;
    const mgpu::sim::CostModel& cost = r.machine.cost;
    const KernelTraffic traffic = kernel_traffic(launch, device, threads);
    OpRequest request;
    request.kind = mgpu::trace::OpKind::Kernel;
    request.name = launch.name;
    request.stream = stream;
    request.device = request.engine_device = device;
    request.engine = "compute";
    request.threads = threads;
    request.peer_access = pointers.peer_access;
    if (pointers.fault.empty()) request.touches = kernel_touches(launch, threads);
    // The device starts on a launch while the host is still in the call, and spends launch_us of
    // its own on it: back-to-back launches of a tiny kernel then take launch_us + kernel_min_us
    // each (4.4 us measured), whether or not the host synchronises after each.
    request.not_before_us = call.begin_us();
    request.duration_us = cost.launch_us + std::max(cost.kernel_min_us, traffic.us);
    request.memory_device = device;
    request.memory_us = traffic.local_us;

    std::optional<Runtime::HeldKernel> held = pointers.fault.empty() ? polled_host_flag(launch) : std::nullopt;
    if (held) {
        held->own_us = request.duration_us;
        request.duration_us = kNeverUs;
        request.memory_us = 0;
        request.stuck = "kernel " + launch.name + ", which polls a flag in page-locked host memory";
    }
    auto shared = std::make_shared<KernelLaunch>(std::move(launch));
    request.work = [shared, device, open_devices, fault = pointers.fault] {
        if (!fault.empty()) {
            raise_fault(device, cudaErrorIllegalAddress, fault);
            return;
        }
        std::optional<KernelFault> kernel_fault;
        std::string escaped;
        const SymbolGrid symbols(device);
        mem::Violation violation;
        const bool clean = mem::run_guarded(
            open_devices,
            [&] {
                try {
                    shared->run_grid();
                } catch (const KernelFault& raised) {
                    kernel_fault = raised;
                } catch (const std::exception& error) {
                    escaped = error.what();
                }
            },
            &violation);
        if (!clean) {
            raise_fault(device, cudaErrorIllegalAddress, describe_violation(*shared, device, violation));
        } else if (kernel_fault) {
            raise_fault(device, kernel_fault->code,
                        "mgpu-sim: " + describe_launch(*shared, device) + " failed with error " +
                            std::to_string(kernel_fault->code) + ": " + kernel_fault->message + "\n" +
                            sticky_note(device, kernel_fault->code));
        } else if (!escaped.empty()) {
            raise_fault(device, cudaErrorLaunchFailure,
                        "mgpu-sim: " + describe_launch(*shared, device) + " failed (cudaErrorLaunchFailure, 719): " +
                            escaped + "\n" + sticky_note(device, cudaErrorLaunchFailure));
        }
    };
    const Enqueued queued = enqueue(std::move(request));
    if (held) {
        held->since_us = call.begin_us();
        r.held_kernels.emplace(queued.id, *held);
        watch_held_kernels();
    }
    return call.done(cudaSuccess);
}

}  // namespace

namespace mgpu::sim {

cudaError_t submit_kernel(KernelLaunch&& launch) { return launch_kernel(std::move(launch), false); }

cudaError_t submit_kernel_per_thread_default_stream(KernelLaunch&& launch) {
    return launch_kernel(std::move(launch), true);
}

}  // namespace mgpu::sim

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value, Site site) {
    ApiCall call("cudaFuncSetAttribute", site);
    call.arg("func", func).arg("attr", static_cast<long long>(attr)).arg("value", value);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    Runtime& r = runtime();
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || static_cast<std::size_t>(value) > r.machine.devices[device].shared_mem_per_block_optin)
            return call.done(cudaErrorInvalidValue);
        r.max_dynamic_shared[func] = value;
        return call.done(cudaSuccess);
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        return call.done(value >= -1 && value <= 100 ? cudaSuccess : cudaErrorInvalidValue);
    case cudaFuncAttributeClusterDimMustBeSet:
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
        return call.done(value >= 0 ? cudaSuccess : cudaErrorInvalidValue);
    default:
        return call.done(cudaErrorInvalidValue);
    }
}
