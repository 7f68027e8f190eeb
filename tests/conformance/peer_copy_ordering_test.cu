// cuda-facts.md, "Peer access" (doc): cudaMemcpyPeer is asynchronous to the host but serialised
// with all work on the current, source and destination devices; cudaMemcpyPeerAsync is ordered
// only by its stream. Checked on the modelled timeline of the 8-GPU machine.
#include <doctest/doctest.h>

#include "stream_scene.cuh"

using conformance::Buffers;
using conformance::make_stream;
using conformance::only_op;
using conformance::use_machine;
using mgpu::trace::OpKind;

namespace {

// The busy copy, the peer copy and the host time right after the peer call.
struct PeerScene {
    mgpu::trace::DeviceOp busy, peer;
    double host_after_peer = 0;
};

// A long copy on a non-blocking stream of `busy_device`, then cudaMemcpyPeer (or its async form on
// a non-blocking stream of the current device) from device 1 to device 2 with `current` current.
PeerScene run_peer_scene(int busy_device, int current, bool async) {
    use_machine("hgx-h200-8");
    const std::size_t peer_bytes = 1 << 20;
    void* on1 = nullptr;
    void* on2 = nullptr;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&on1, peer_bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    REQUIRE(cudaMalloc(&on2, peer_bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(busy_device) == cudaSuccess);
    Buffers busy;
    cudaStream_t busy_stream = make_stream(cudaStreamNonBlocking);
    REQUIRE(cudaSetDevice(current) == cudaSuccess);
    cudaStream_t peer_stream = make_stream(cudaStreamNonBlocking);
    mgpu::sim::clear_trace();

    REQUIRE(cudaSetDevice(busy_device) == cudaSuccess);
    busy.long_copy(busy_stream);
    REQUIRE(cudaSetDevice(current) == cudaSuccess);
    if (async) CHECK(cudaMemcpyPeerAsync(on2, 2, on1, 1, peer_bytes, peer_stream) == cudaSuccess);
    else CHECK(cudaMemcpyPeer(on2, 2, on1, 1, peer_bytes) == cudaSuccess);
    PeerScene scene;
    scene.host_after_peer = mgpu::sim::host_now_us();
    for (int d = 0; d < 8; ++d) {
        REQUIRE(cudaSetDevice(d) == cudaSuccess);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
    scene.busy = only_op(OpKind::MemcpyHtoD);
    scene.peer = only_op(OpKind::MemcpyPeer);
    return scene;
}

}  // namespace

TEST_CASE("cudaMemcpyPeer is serialised with all work on the destination device") {
    const auto scene = run_peer_scene(/*busy_device=*/2, /*current=*/0, /*async=*/false);
    CHECK(scene.peer.start_us >= scene.busy.end_us);
}

TEST_CASE("cudaMemcpyPeer is serialised with all work on the source device") {
    const auto scene = run_peer_scene(/*busy_device=*/1, /*current=*/0, /*async=*/false);
    CHECK(scene.peer.start_us >= scene.busy.end_us);
}

TEST_CASE("cudaMemcpyPeer is serialised with all work on the current device") {
    const auto scene = run_peer_scene(/*busy_device=*/3, /*current=*/3, /*async=*/false);
    CHECK(scene.peer.start_us >= scene.busy.end_us);
}

TEST_CASE("cudaMemcpyPeer is asynchronous to the host") {
    const auto scene = run_peer_scene(/*busy_device=*/2, /*current=*/0, /*async=*/false);
    CHECK(scene.host_after_peer < scene.busy.end_us);
    CHECK(scene.host_after_peer < scene.peer.end_us);
}

TEST_CASE("cudaMemcpyPeerAsync is ordered only by its stream") {
    // The copy goes on a stream of the source device while the destination device is busy.
    const auto scene = run_peer_scene(/*busy_device=*/2, /*current=*/1, /*async=*/true);
    CHECK(scene.peer.start_us < scene.busy.end_us);
    CHECK(scene.host_after_peer < scene.peer.end_us);
}
