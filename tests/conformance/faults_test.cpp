// Faults injected on request (control.h, Faults): cudaMalloc failing at call N, 711 on the Nth
// cudaDeviceEnablePeerAccess, a device that is gone (46), pairs that cannot peer. Each fault must
// look to the program exactly as the real failure does.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>

#include "conformance_support.h"

using conformance::use_machine;

namespace {
void* const kSentinel = reinterpret_cast<void*>(std::uintptr_t{0x5a5a5a5a});
constexpr int kUnwritten = 12345;
}  // namespace

TEST_CASE("fault malloc_fails_at = 3: the third cudaMalloc since reset returns 2 with a null pointer, the others succeed") {
    mgpu::sim::Faults faults;
    faults.malloc_fails_at = 3;
    use_machine("h200", "eager", faults);
    void* first = nullptr;
    void* second = nullptr;
    void* third = kSentinel;
    void* fourth = nullptr;
    CHECK(cudaMalloc(&first, 1024) == cudaSuccess);
    CHECK(cudaMalloc(&second, 1024) == cudaSuccess);
    CHECK(cudaMalloc(&third, 1024) == cudaErrorMemoryAllocation);
    CHECK(third == nullptr);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaMalloc(&fourth, 1024) == cudaSuccess);   // not sticky, as a real out-of-memory
    CHECK(fourth != nullptr);
    CHECK(cudaFree(first) == cudaSuccess);
    CHECK(cudaFree(second) == cudaSuccess);
    CHECK(cudaFree(fourth) == cudaSuccess);
}

TEST_CASE("fault malloc_fails_at counts cudaMalloc calls on every device") {
    mgpu::sim::Faults faults;
    faults.malloc_fails_at = 2;
    use_machine("hgx-h200-8", "eager", faults);
    void* on0 = nullptr;
    void* on1 = kSentinel;
    CHECK(cudaMalloc(&on0, 64) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaMalloc(&on1, 64) == cudaErrorMemoryAllocation);
    CHECK(on1 == nullptr);
}

TEST_CASE("fault malloc_fails_at restarts its count at reset") {
    mgpu::sim::Faults faults;
    faults.malloc_fails_at = 1;
    use_machine("h200", "eager", faults);
    void* p = kSentinel;
    CHECK(cudaMalloc(&p, 64) == cudaErrorMemoryAllocation);
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);
    use_machine("h200", "eager", faults);
    p = kSentinel;
    CHECK(cudaMalloc(&p, 64) == cudaErrorMemoryAllocation);
}

TEST_CASE("fault stream_create_fails_at = 2: the second stream creation on any device returns 2 and makes no stream") {
    mgpu::sim::Faults faults;
    faults.stream_create_fails_at = 2;
    use_machine("pcie-4", "eager", faults);
    cudaStream_t first = nullptr, second = nullptr, third = nullptr;
    CHECK(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaStreamCreate(&first) == cudaSuccess);
    const std::size_t live = mgpu::sim::live_streams();
    CHECK(cudaSetDevice(2) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking) == cudaErrorMemoryAllocation);
    CHECK(second == nullptr);
    CHECK(mgpu::sim::live_streams() == live);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaStreamCreateWithPriority(&third, cudaStreamNonBlocking, 0) == cudaSuccess);   // not sticky
    CHECK(cudaStreamDestroy(first) == cudaSuccess);
    CHECK(cudaStreamDestroy(third) == cudaSuccess);
}

TEST_CASE("fault enable_gives_711_at = 2: the second cudaDeviceEnablePeerAccess returns 711 and enables nothing") {
    mgpu::sim::Faults faults;
    faults.enable_gives_711_at = 2;
    use_machine("hgx-h200-8", "eager", faults);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(2, 0) == cudaErrorTooManyPeers);
    CHECK(cudaGetLastError() == cudaErrorTooManyPeers);
    CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 2));
    CHECK(cudaDeviceDisablePeerAccess(2) == cudaErrorPeerAccessNotEnabled);
    CHECK(cudaDeviceEnablePeerAccess(3, 0) == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(0, 1));
    CHECK(mgpu::sim::peer_access_enabled(0, 3));
}

TEST_CASE("fault lost_device: the lost device answers with 46, the others keep working") {
    mgpu::sim::Faults faults;
    faults.lost_device = 1;
    use_machine("hgx-h200-8", "eager", faults);
    CHECK(cudaSetDevice(1) == cudaErrorDevicesUnavailable);
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 0);
    cudaDeviceProp properties{};
    CHECK(cudaGetDeviceProperties(&properties, 1) == cudaErrorDevicesUnavailable);
    CHECK(cudaGetLastError() == cudaErrorDevicesUnavailable);

    void* on0 = nullptr;
    CHECK(cudaMalloc(&on0, 4096) == cudaSuccess);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    void* on2 = nullptr;
    CHECK(cudaMalloc(&on2, 4096) == cudaSuccess);
    CHECK(cudaFree(on2) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("fault lost_device on the only GPU: cudaMalloc returns 46") {
    mgpu::sim::Faults faults;
    faults.lost_device = 0;
    use_machine("h200", "eager", faults);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 4096) == cudaErrorDevicesUnavailable);
    CHECK(p == nullptr);
    CHECK(cudaDeviceSynchronize() == cudaErrorDevicesUnavailable);
}

TEST_CASE("fault no_peer_pairs = \"0-1\": that pair cannot peer in either direction, other pairs still can") {
    mgpu::sim::Faults faults;
    faults.no_peer_pairs = "0-1";
    use_machine("hgx-h200-8", "eager", faults);
    int can = kUnwritten;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 0) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 2) == cudaSuccess);
    CHECK(can == 1);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
    CHECK(cudaDeviceEnablePeerAccess(2, 0) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessUnsupported);
    int value = kUnwritten;
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 1) == cudaSuccess);
    CHECK(value == 0);
}

TEST_CASE("fault no_peer_pairs with several pairs: \"0-1,2-3\"") {
    mgpu::sim::Faults faults;
    faults.no_peer_pairs = "0-1,2-3";
    use_machine("hgx-h200-8", "eager", faults);
    int can = kUnwritten;
    CHECK(cudaDeviceCanAccessPeer(&can, 3, 2) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 0) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 2) == cudaSuccess);
    CHECK(can == 1);
}

TEST_CASE("a peer copy between a pair made unable to peer is still correct") {
    mgpu::sim::Faults faults;
    faults.no_peer_pairs = "0-1";
    use_machine("hgx-h200-8", "eager", faults);
    const std::size_t count = 10007;
    const std::size_t bytes = count * sizeof(float);
    const auto input = conformance::random_floats(count, 11);
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(a, input.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    CHECK(cudaMemcpyPeer(b, 1, a, 0, bytes) == cudaSuccess);
    std::vector<float> output(count, -1.0f);
    REQUIRE(cudaMemcpy(output.data(), b, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(output == input);
}

TEST_CASE("MGPU_FAULTS, MGPU_TOPOLOGY and MGPU_SCHEDULE are read by options_from_environment") {
    conformance::ScopedEnvironmentVariable faults("MGPU_FAULTS", "malloc=4,enable711=2,lost=3,nopeer=0-1");
    conformance::ScopedEnvironmentVariable topology("MGPU_TOPOLOGY", "pcie-4");
    conformance::ScopedEnvironmentVariable schedule("MGPU_SCHEDULE", "shuffle:7");
    const auto options = mgpu::sim::options_from_environment();
    CHECK(options.topology == "pcie-4");
    CHECK(options.schedule.kind == mgpu::sim::ScheduleKind::Shuffle);
    CHECK(options.schedule.seed == 7);
    CHECK(options.faults.malloc_fails_at == 4);
    CHECK(options.faults.enable_gives_711_at == 2);
    CHECK(options.faults.lost_device == 3);
    CHECK(options.faults.no_peer_pairs == "0-1");
}

TEST_CASE("parse_schedule reads eager, lazy and shuffle:SEED and refuses anything else") {
    CHECK(mgpu::sim::parse_schedule("eager").kind == mgpu::sim::ScheduleKind::Eager);
    CHECK(mgpu::sim::parse_schedule("lazy").kind == mgpu::sim::ScheduleKind::Lazy);
    const auto shuffled = mgpu::sim::parse_schedule("shuffle:42");
    CHECK(shuffled.kind == mgpu::sim::ScheduleKind::Shuffle);
    CHECK(shuffled.seed == 42);
    CHECK(mgpu::sim::parse_schedule(mgpu::sim::to_string(shuffled)).seed == 42);
    CHECK_THROWS_AS(mgpu::sim::parse_schedule("sometimes"), std::invalid_argument);
}
