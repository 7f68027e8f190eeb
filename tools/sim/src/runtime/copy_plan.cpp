#include "copy_plan.h"

#include <cstring>
#include <memory>
#include <vector>

#include "memory/memory.h"

namespace mgpu::sim::rt {

namespace mem = mgpu::sim::mem;
using mgpu::trace::OpKind;

bool locate(const void* p, std::size_t count, CopyEnd& end) {
    end = CopyEnd{};
    if (mem::device_of(p) >= 0) {
        auto allocation = mem::find_device(p);
        if (!allocation) return false;
        const auto start = reinterpret_cast<std::uintptr_t>(p);
        if (start + count > allocation->base + allocation->size) return false;
        end.device = allocation->device;
        return true;
    }
    if (auto range = mem::find_host(p)) {
        const auto start = reinterpret_cast<std::uintptr_t>(p);
        end.pinned = start + count <= range->base + range->size;
    }
    return true;
}

bool direct_peer_path(int src, int dst) {
    Runtime& r = runtime();
    return r.devices[dst].peer_enabled[src] || r.devices[src].peer_enabled[dst];
}

namespace {

// The device allocation an address belongs to now (0 for host memory): races need the same one.
std::uint64_t allocation_serial(const void* p) {
    auto allocation = mem::find_device(p);
    return allocation ? allocation->serial : 0;
}

std::string pair_name(const char* what, int src, int dst) {
    return std::string(what) + " " + std::to_string(src) + "->" + std::to_string(dst);
}

// The shared host links `device` reaches the host through, in one direction.
void cross_host_links(OpRequest& request, int device, int direction) {
    const auto& shared = runtime().machine.shared_host_links;
    for (std::size_t link = 0; link < shared.size(); ++link)
        for (int member : shared[link].devices)
            if (member == device) request.host_links.emplace_back(static_cast<int>(link), direction);
}

constexpr int kTowardsDevice = 0, kTowardsHost = 1;

}  // namespace

Enqueued enqueue_copy(const CopySpec& spec) {
    Runtime& r = runtime();
    const CostModel& cost = r.machine.cost;
    OpRequest request;
    request.name = spec.api_name;
    request.stream = spec.stream;
    request.src_device = spec.from.device;
    request.dst_device = spec.to.device;
    const std::size_t rows = spec.shape.rows;
    const std::size_t moved = spec.count * rows;
    request.bytes = moved;
    const int src = spec.from.device, dst = spec.to.device;
    double gbps = 0;
    double latency_us = cost.copy_latency_us;
    if (src < 0 && dst < 0) {
        request.kind = OpKind::MemcpyHtoH;
        request.device = spec.stream->device;
        request.engine = "host";
        gbps = cost.d2h_pageable_gbps;
        request.pinned_host = spec.from.pinned && spec.to.pinned;
    } else if (src < 0) {
        request.kind = OpKind::MemcpyHtoD;
        request.device = request.engine_device = dst;
        request.engine = "copy-h2d";
        request.pinned_host = spec.from.pinned;
        gbps = spec.from.pinned || spec.staged_in_pinned_buffer ? cost.h2d_pinned_gbps : cost.h2d_pageable_gbps;
        latency_us = cost.h2d_latency_us;
        if (spec.staged_in_pinned_buffer) latency_us += static_cast<double>(moved) / (cost.staging_gbps * 1e3);
        cross_host_links(request, dst, kTowardsDevice);
    } else if (dst < 0) {
        request.kind = OpKind::MemcpyDtoH;
        request.device = request.engine_device = src;
        request.engine = "copy-d2h";
        request.pinned_host = spec.to.pinned;
        gbps = spec.to.pinned ? cost.d2h_pinned_gbps : cost.d2h_pageable_gbps;
        latency_us = cost.d2h_latency_us;
        cross_host_links(request, src, kTowardsHost);
    } else if (src == dst) {
        request.kind = OpKind::MemcpyDtoD;
        request.device = request.engine_device = dst;
        request.engine = "copy-d2d";
        gbps = r.machine.devices[dst].d2d_copy_gbps;
        latency_us = cost.d2d_latency_us;
        request.memory_device = dst;
        request.memory_us = static_cast<double>(moved) / (gbps * 1e3);
    } else {
        request.kind = OpKind::MemcpyPeer;
        request.device = dst;
        if (direct_peer_path(src, dst)) {
            request.engine = pair_name("link", src, dst);
            gbps = r.machine.links[src][dst].gbps;
        } else {
            request.engine = pair_name("staged", src, dst);
            request.staged = true;
            gbps = cost.staged_peer_gbps;
            latency_us = cost.staged_peer_latency_us;
            cross_host_links(request, src, kTowardsHost);
            cross_host_links(request, dst, kTowardsDevice);
        }
    }
    request.duration_us = transfer_us(moved, gbps, latency_us);
    if (spec.serialise_devices) {
        request.barrier_devices.push_back(spec.stream->device);
        for (int device : {src, dst})
            if (device >= 0 && device != spec.stream->device) request.barrier_devices.push_back(device);
    }

    void* target = spec.dst;
    const void* source = spec.src;
    const std::size_t count = spec.count;
    const std::size_t src_pitch = rows > 1 ? spec.shape.src_pitch : count;
    const std::size_t dst_pitch = rows > 1 ? spec.shape.dst_pitch : count;
    const std::size_t src_span = Rows::span(count, rows, src_pitch);
    const std::size_t dst_span = Rows::span(count, rows, dst_pitch);
    std::shared_ptr<std::vector<char>> staged;
    if (spec.snapshot_source) {
        staged = std::make_shared<std::vector<char>>(static_cast<const char*>(source),
                                                     static_cast<const char*>(source) + src_span);
    }
    const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
    request.touches = {{address(target), address(target) + dst_span, true, allocation_serial(target)}};
    // A pageable source staged at the call is read then, not while the copy runs.
    if (!staged)
        request.touches.push_back({address(source), address(source) + src_span, false, allocation_serial(source)});
    request.work = [target, source, count, rows, src_pitch, dst_pitch, staged] {
        const char* from = staged ? staged->data() : static_cast<const char*>(source);
        char* to = static_cast<char*>(target);
        mem::Violation violation;
        mem::run_guarded(mem::kAllDevices, [&] {
            for (std::size_t row = 0; row < rows; ++row) std::memmove(to + row * dst_pitch, from + row * src_pitch, count);
        }, &violation);
    };
    return enqueue(std::move(request));
}

Enqueued enqueue_memset(const char* api_name, void* p, int value, std::size_t count, int device,
                        CUstream_st* stream, Rows shape) {
    Runtime& r = runtime();
    OpRequest request;
    request.kind = OpKind::Memset;
    request.name = api_name;
    request.stream = stream;
    request.device = device >= 0 ? device : stream->device;
    request.dst_device = device;
    request.engine = "compute";
    request.engine_device = request.device;
    const std::size_t rows = shape.rows;
    const std::size_t pitch = rows > 1 ? shape.dst_pitch : count;
    const std::size_t filled = count * rows;
    request.bytes = filled;
    request.pinned_host = device < 0;
    if (device >= 0) {
        // A memset only writes, so it fills memory at the rate a copy reads plus writes (measured on
        // an H200: 256 MiB in 62 us, 4.3 TB/s).
        const double fill_gbps = 2 * r.machine.devices[device].d2d_copy_gbps;
        const CostModel& cost = r.machine.cost;
        request.duration_us =
            transfer_us(filled, fill_gbps, filled <= kPageMemsetLimit ? cost.memset_page_us : cost.memset_latency_us);
        request.memory_device = device;
        request.memory_us = static_cast<double>(filled) / (fill_gbps * 1e3);
    } else {
        request.duration_us = transfer_us(filled, r.machine.devices[request.device].memory_bandwidth_gbps);
    }
    const std::size_t span = Rows::span(count, rows, pitch);
    request.touches = {{reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p) + span, true,
                        allocation_serial(p)}};
    request.work = [p, value, count, rows, pitch] {
        char* to = static_cast<char*>(p);
        mem::Violation violation;
        mem::run_guarded(mem::kAllDevices, [&] {
            for (std::size_t row = 0; row < rows; ++row) std::memset(to + row * pitch, value, count);
        }, &violation);
    };
    return enqueue(std::move(request));
}

}  // namespace mgpu::sim::rt
