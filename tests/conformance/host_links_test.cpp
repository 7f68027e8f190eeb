// Host links that devices share: GPUs behind one PCIe switch reach host memory through its one
// uplink, so pinned copies of two such GPUs at the same time each get about half of it, while GPUs
// behind different switches copy at full speed side by side. Which devices share a switch is the
// preset's documented layout (tools/sim/src/topology/FORMAT.md, `mgpu topo`); the times are the
// simulator's modelled copy times, read from its trace.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;
using mgpu::trace::OpKind;

namespace {

constexpr std::size_t kBytes = std::size_t{64} << 20;

struct DeviceSide {
    int device = 0;
    void* buffer = nullptr;
    void* pinned = nullptr;
    cudaStream_t stream = nullptr;
    explicit DeviceSide(int d) : device(d) {
        REQUIRE(cudaSetDevice(device) == cudaSuccess);
        REQUIRE(cudaMalloc(&buffer, kBytes) == cudaSuccess);
        REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);
        std::memset(pinned, 0x5a, kBytes);
        REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    }
    ~DeviceSide() {
        cudaSetDevice(device);
        cudaStreamDestroy(stream);
        cudaFree(buffer);
        cudaFreeHost(pinned);
    }
    DeviceSide(const DeviceSide&) = delete;
    DeviceSide& operator=(const DeviceSide&) = delete;
    void copy(cudaMemcpyKind kind) {
        REQUIRE(cudaSetDevice(device) == cudaSuccess);
        if (kind == cudaMemcpyHostToDevice)
            REQUIRE(cudaMemcpyAsync(buffer, pinned, kBytes, kind, stream) == cudaSuccess);
        else
            REQUIRE(cudaMemcpyAsync(pinned, buffer, kBytes, kind, stream) == cudaSuccess);
    }
};

// The copies of one direction in the trace, and the span from the first start to the last end.
struct Spans {
    std::vector<mgpu::trace::DeviceOp> copies;
    double span_us = 0;
};

Spans copies_of(OpKind kind) {
    Spans found;
    found.copies = conformance::ops_of_kind(kind);
    if (found.copies.empty()) return found;
    double first = found.copies.front().start_us, last = found.copies.front().end_us;
    for (const auto& op : found.copies) {
        first = std::min(first, op.start_us);
        last = std::max(last, op.end_us);
    }
    found.span_us = last - first;
    return found;
}

// One device's copy alone, then the two devices' copies issued together; returns (alone, together).
std::pair<double, double> alone_and_together(int a, int b, cudaMemcpyKind kind, OpKind op_kind) {
    DeviceSide first(a), second(b);
    mgpu::sim::clear_trace();
    first.copy(kind);
    REQUIRE(cudaStreamSynchronize(first.stream) == cudaSuccess);
    const double alone = copies_of(op_kind).span_us;
    mgpu::sim::clear_trace();
    first.copy(kind);
    second.copy(kind);
    REQUIRE(cudaSetDevice(a) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(first.stream) == cudaSuccess);
    REQUIRE(cudaSetDevice(b) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(second.stream) == cudaSuccess);
    const Spans together = copies_of(op_kind);
    REQUIRE(together.copies.size() == 2);
    return {alone, together.span_us};
}

}  // namespace

TEST_CASE("pinned host-to-device copies of two GPUs behind one PCIe switch share its uplink (hgx-h200-8: GPUs 0 and 1)") {
    use_machine("hgx-h200-8");
    const auto [alone, together] = alone_and_together(0, 1, cudaMemcpyHostToDevice, OpKind::MemcpyHtoD);
    CAPTURE(alone);
    CAPTURE(together);
    // Both copies need the one link: together they take about twice as long as one alone.
    CHECK(together >= 1.9 * alone);
    CHECK(together <= 2.1 * alone);
}

TEST_CASE("pinned device-to-host copies of two GPUs behind one switch share its uplink too (islands-2x2: GPUs 2 and 3)") {
    use_machine("islands-2x2");
    const auto [alone, together] = alone_and_together(2, 3, cudaMemcpyDeviceToHost, OpKind::MemcpyDtoH);
    CAPTURE(alone);
    CAPTURE(together);
    CHECK(together >= 1.9 * alone);
}

TEST_CASE("GPUs behind different switches copy from the host at full speed at the same time (hgx-h200-8: GPUs 0 and 2)") {
    use_machine("hgx-h200-8");
    const auto [alone, together] = alone_and_together(0, 2, cudaMemcpyHostToDevice, OpKind::MemcpyHtoD);
    CAPTURE(alone);
    CAPTURE(together);
    CHECK(together <= 1.05 * alone);
}

TEST_CASE("machines whose boards each have their own root port share no host link (pcie-4, mixed-3)") {
    for (const char* preset : {"pcie-4", "mixed-3"}) {
        CAPTURE(preset);
        use_machine(preset);
        const auto [alone, together] = alone_and_together(0, 1, cudaMemcpyHostToDevice, OpKind::MemcpyHtoD);
        CAPTURE(alone);
        CAPTURE(together);
        CHECK(together <= 1.05 * alone);
    }
}

TEST_CASE("two GPUs of one switch, one copying to the host and one from it, use the two directions of its link at once") {
    use_machine("hgx-h200-8");
    DeviceSide zero(0), one(1);
    mgpu::sim::clear_trace();
    zero.copy(cudaMemcpyHostToDevice);
    one.copy(cudaMemcpyDeviceToHost);
    for (DeviceSide* side : {&zero, &one}) {
        REQUIRE(cudaSetDevice(side->device) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(side->stream) == cudaSuccess);
    }
    const auto in = conformance::last_op_of_kind(OpKind::MemcpyHtoD);
    const auto out = conformance::last_op_of_kind(OpKind::MemcpyDtoH);
    REQUIRE(in.has_value());
    REQUIRE(out.has_value());
    CHECK(mgpu::trace::overlaps(*in, *out));
}
