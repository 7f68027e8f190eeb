// Criterion "copy results" (lesson sections 3.7 to 3.9): bytes and scaled values arrive intact on
// every kind of pair, and a kernel reads across only where access is open.
#include <doctest/doctest.h>

#include <string>

#include "support/device_data.h"
#include "support/expectations.h"
#include "mgpu/sim/control.h"
#include "peer_access.h"
#include "support/scenario.h"
#include "support/student_calls.h"

namespace {

using namespace suite;
using mgpu::trace::OpKind;

std::string copy_text(int dst_device, int src_device, std::size_t bytes) {
    return "copy_between_devices(dst on " + std::to_string(dst_device) + ", src on " + std::to_string(src_device) +
           ", " + suite::counted(bytes, "byte") + ")";
}

std::string scale_text(int dst_device, int src_device, std::size_t n) {
    return "scale_from_peer(dst on " + std::to_string(dst_device) + ", src on " + std::to_string(src_device) +
           ", n = " + std::to_string(n) + ")";
}

void check_copy(int dst_device, int src_device, std::size_t bytes, std::uint64_t salt) {
    const auto source = random_bytes(bytes, salt);
    DeviceBytes src(src_device, bytes), dst(dst_device, bytes);
    src.upload(source);
    dst.upload({});
    cudaSetDevice(src_device);
    StudentCalls calls;
    const std::string what = copy_text(dst_device, src_device, bytes);
    const cudaError_t status =
        calls.watch(what, [&] { return copy_between_devices(dst.data(), dst_device, src.data(), src_device, bytes); });
    expect_status(status, cudaSuccess, what, calls);
    expect_copied(dst.download(), source, what);
}

void check_scale(int dst_device, int src_device, std::size_t n, std::uint64_t salt, StudentCalls* calls_out = nullptr) {
    const auto source = random_floats(n, salt);
    const float factor = random_factor(salt);
    DeviceFloats src(src_device, n), dst(dst_device, n);
    src.upload(source);
    dst.fill_with_guard_value();
    cudaSetDevice(src_device);
    StudentCalls local;
    StudentCalls& calls = calls_out ? *calls_out : local;
    const std::string what = scale_text(dst_device, src_device, n);
    const cudaError_t status =
        calls.watch(what, [&] { return scale_from_peer(dst.data(), dst_device, src.data(), src_device, n, factor); });
    expect_status(status, cudaSuccess, what, calls);
    expect_scaled(dst.download(), source, factor, what);
}

// The call that queued a device operation.
const mgpu::trace::ApiCall* call_of(const StudentCalls& calls, const mgpu::trace::DeviceOp& op) {
    static mgpu::trace::ApiCall found;
    for (const auto& call : calls.calls()) {
        if (call.seq == op.api_seq) {
            found = call;
            return &found;
        }
    }
    return nullptr;
}

}  // namespace

TEST_CASE("copy results: copy_between_devices across NVLink peers, odd size") {
    if (!start({"hgx-h200-8", "shuffle:3"}, "1000003 bytes from device 0 to 5")) return;
    check_copy(5, 0, 1000003, 1);
}

TEST_CASE("copy results: copy_between_devices without P2P, staged through the host") {
    if (!start({"pcie-4", "lazy"}, "777777 bytes from device 3 to 1")) return;
    check_copy(1, 3, 777777, 2);
}

TEST_CASE("copy results: copy_between_devices of 0 bytes and of 1 byte across islands") {
    if (!start({"islands-2x2"}, "0 and 1 bytes from device 1 to 3")) return;
    check_copy(3, 1, 0, 3);
    check_copy(3, 1, 1, 4);
}

TEST_CASE("copy results: copy_between_devices of 64 MiB across NVLink") {
    if (!start({"hgx-h200-8"}, "64 MiB from device 7 to 2")) return;
    check_copy(2, 7, std::size_t{64} << 20, 5);
}

TEST_CASE("copy results: copy_between_devices returns only when the copy is complete") {
    const std::size_t bytes = (std::size_t{8} << 20) + 3;
    if (!start({"hgx-h200-8", "lazy"}, "8 MiB + 3 bytes from device 1 to 6")) return;
    const auto source = random_bytes(bytes, 6);
    DeviceBytes src(1, bytes), dst(6, bytes);
    src.upload(source);
    dst.upload({});
    cudaSetDevice(1);
    StudentCalls calls;
    const cudaError_t status =
        calls.watch(copy_text(6, 1, bytes), [&] { return copy_between_devices(dst.data(), 6, src.data(), 1, bytes); });
    expect_status(status, cudaSuccess, copy_text(6, 1, bytes), calls);
    // Run whatever is still queued, then compare each copy's modelled end with the moment the
    // function returned: a copy still running then was not complete.
    mgpu::sim::drain_all();
    for (const auto& op : calls.ops()) {
        if (op.kind == OpKind::Kernel || op.kind == OpKind::EventRecord || op.kind == OpKind::StreamWait) continue;
        expect(op.end_us <= calls.returned_at_us() + 1e-6,
               copy_text(6, 1, bytes) + " returns after its copy has finished (wait for it before returning)",
               "the copy ends before the function returns",
               "the copy ends " + std::to_string(op.end_us - calls.returned_at_us()) +
                   " us after the function returned",
               call_of(calls, op));
    }
    expect_copied(dst.download(), source, copy_text(6, 1, bytes));
}

TEST_CASE("copy results: scale_from_peer reads across open access with no staging copy") {
    const std::size_t n = 300007;
    if (!start({"hgx-h200-8", "shuffle:9"}, "300007 floats from device 0 to 3, access 3 -> 0 open")) return;
    cudaSetDevice(3);
    StudentCalls opening;
    require_status(opening.watch("open_peer_access(3, 0)", [] { return open_peer_access(3, 0); }), cudaSuccess, "open_peer_access(3, 0)",
                   opening);
    cudaGetLastError();
    StudentCalls calls;
    check_scale(3, 0, n, 7, &calls);
    // Only the simulator sees which memory a kernel touched; on real GPUs the check below (no
    // copy first) is what remains.
    bool read_across = kOnRealGpu;
    for (const auto& op : calls.ops_of(OpKind::Kernel)) read_across = read_across || op.peer_access;
    expect(read_across, scale_text(3, 0, n) + " runs a kernel on device 3 that reads src on device 0 through peer access",
           "a kernel reading across the open 3 -> 0 direction", "no kernel read across");
    for (const auto& op : calls.ops()) {
        if (op.kind != OpKind::MemcpyPeer && op.kind != OpKind::MemcpyDtoD) continue;
        expect(false, scale_text(3, 0, n) + " copies nothing first when access 3 -> 0 is open (the kernel reads src directly)",
               "no copy", std::string(mgpu::trace::to_string(op.kind)) + " of " + suite::counted(op.bytes, "byte"),
               call_of(calls, op));
        break;
    }
}

TEST_CASE("copy results: scale_from_peer on a pair that can peer but has no access open") {
    if (!start({"hgx-h200-8"}, "4099 floats from device 4 to 1, no access open")) return;
    check_scale(1, 4, 4099, 8);
}

TEST_CASE("copy results: scale_from_peer across islands, where there is no peer path") {
    if (!start({"islands-2x2", "lazy"}, "100003 floats from device 0 to 2")) return;
    check_scale(2, 0, 100003, 9);
}

TEST_CASE("copy results: scale_from_peer on one device, n = 1 and n = 0") {
    if (!start({"h200"}, "1 and 0 floats on device 0")) return;
    check_scale(0, 0, 1, 10);
    check_scale(0, 0, 0, 11);
}
