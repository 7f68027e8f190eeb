// cuda-facts.md, "Peer access": every row that the API answers without running a kernel.
// The kernel rows (one-way access, faults) are in kernels_access_test.cu.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {
constexpr int kUnwritten = 12345;   // a value no call should ever write into an answer
}

TEST_CASE("cudaDeviceCanAccessPeer(&c, 0, 0) returns 0 and c = 0: a device is never its own peer") {
    for (const auto& preset : conformance::kGpuPresets) {
        CAPTURE(preset);
        if (!conformance::use_machine_if_hostable(preset)) continue;
        int can = kUnwritten;
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
        CHECK(can == 0);
    }
}

TEST_CASE("cudaDeviceCanAccessPeer(&c, 0, 1) with one GPU returns 101 and leaves c unwritten") {
    use_machine("h200");
    int can = kUnwritten;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaErrorInvalidDevice);
    CHECK(can == kUnwritten);
}

// cuda-facts.md's table says this call crashes inside the runtime; CUDA 13.0 on the H200 (driver
// 580) answered 1 in a process of its own, both as its first call and after cudaFree(0), and 101
// for (nullptr, 0, 1) on one GPU: the device ids are checked first.
TEST_CASE("cudaDeviceCanAccessPeer with a null answer pointer returns 1; an invalid device id still gives 101") {
    use_machine("h200");
    CHECK(cudaDeviceCanAccessPeer(nullptr, 0, 0) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaDeviceCanAccessPeer(nullptr, 0, 1) == cudaErrorInvalidDevice);
    cudaGetLastError();
}

TEST_CASE("cudaDeviceCanAccessPeer with a negative device id returns 101 and leaves c unwritten") {
    for (const char* preset : {"h200", "hgx-h200-8"}) {
        CAPTURE(preset);
        if (!conformance::use_machine_if_hostable(preset)) continue;
        int can = kUnwritten;
        CHECK(cudaDeviceCanAccessPeer(&can, -1, 0) == cudaErrorInvalidDevice);
        CHECK(can == kUnwritten);
        CHECK(cudaDeviceCanAccessPeer(&can, 0, -1) == cudaErrorInvalidDevice);
        CHECK(can == kUnwritten);
    }
}

TEST_CASE("cudaDeviceCanAccessPeer with a device id past the last device returns 101 and leaves c unwritten") {
    use_machine("hgx-h200-8");
    int can = kUnwritten;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 8) == cudaErrorInvalidDevice);
    CHECK(can == kUnwritten);
    CHECK(cudaDeviceCanAccessPeer(&can, 8, 0) == cudaErrorInvalidDevice);
    CHECK(can == kUnwritten);
}

// Asks cudaDeviceCanAccessPeer about every ordered pair of distinct devices and compares each
// answer with what the machine's description says it must be.
template <class Expected>
void check_every_pair(int devices, Expected expected) {
    for (int a = 0; a < devices; ++a)
        for (int b = 0; b < devices; ++b) {
            if (a == b) continue;
            CAPTURE(a);
            CAPTURE(b);
            int can = kUnwritten;
            CHECK(cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess);
            CHECK(can == expected(a, b));
        }
}

TEST_CASE("cudaDeviceCanAccessPeer answers 1 for every pair of an NVSwitch machine") {
    use_machine("hgx-h200-8");
    check_every_pair(8, [](int, int) { return 1; });
}

TEST_CASE("cudaDeviceCanAccessPeer answers 0 for every pair of GPUs on PCIe without P2P") {
    use_machine("pcie-4");
    check_every_pair(4, [](int, int) { return 0; });
}

TEST_CASE("cudaDeviceCanAccessPeer answers 1 inside an NVLink island and 0 across islands") {
    use_machine("islands-2x2");
    check_every_pair(4, [](int a, int b) { return a / 2 == b / 2 ? 1 : 0; });
}

TEST_CASE("cudaDeviceEnablePeerAccess(0, 0) while device 0 is current (self) returns 217") {
    for (const char* preset : {"h200", "hgx-h200-8"}) {
        CAPTURE(preset);
        if (!conformance::use_machine_if_hostable(preset)) continue;
        REQUIRE(cudaSetDevice(0) == cudaSuccess);
        CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessUnsupported);
    }
}

TEST_CASE("cudaDeviceEnablePeerAccess with flags != 0 returns 1, checked before anything else") {
    SUBCASE("valid pair that can peer") {
        use_machine("hgx-h200-8");
        CHECK(cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue);
        CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 1));
        // The refused call enabled nothing, so a correct call afterwards succeeds.
        CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    }
    SUBCASE("before the self check") {
        use_machine("hgx-h200-8");
        CHECK(cudaDeviceEnablePeerAccess(0, 1) == cudaErrorInvalidValue);
    }
    SUBCASE("before the device id check") {
        use_machine("h200");
        CHECK(cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue);
        CHECK(cudaDeviceEnablePeerAccess(-1, 2) == cudaErrorInvalidValue);
    }
    SUBCASE("before the can-peer check") {
        use_machine("pcie-4");
        CHECK(cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue);
    }
    SUBCASE("before the already-enabled check") {
        use_machine("hgx-h200-8");
        REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
        CHECK(cudaDeviceEnablePeerAccess(1, 4) == cudaErrorInvalidValue);
    }
}

TEST_CASE("cudaDeviceEnablePeerAccess(invalid peer, 0) returns 101") {
    SUBCASE("one GPU") {
        use_machine("h200");
        CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorInvalidDevice);
    }
    SUBCASE("past the last device") {
        use_machine("hgx-h200-8");
        CHECK(cudaDeviceEnablePeerAccess(8, 0) == cudaErrorInvalidDevice);
    }
    SUBCASE("negative") {
        use_machine("hgx-h200-8");
        CHECK(cudaDeviceEnablePeerAccess(-1, 0) == cudaErrorInvalidDevice);
    }
}

TEST_CASE("cudaDeviceEnablePeerAccess(peer, 0) when the pair cannot peer returns 217") {
    SUBCASE("PCIe without P2P") {
        use_machine("pcie-4");
        CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
        CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 1));
    }
    SUBCASE("across NVLink islands") {
        use_machine("islands-2x2");
        CHECK(cudaDeviceEnablePeerAccess(2, 0) == cudaErrorPeerAccessUnsupported);
        REQUIRE(cudaSetDevice(1) == cudaSuccess);
        CHECK(cudaDeviceEnablePeerAccess(3, 0) == cudaErrorPeerAccessUnsupported);
        CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
    }
}

TEST_CASE("cudaDeviceEnablePeerAccess twice for the same pair returns 704, which stays the last error until cudaGetLastError") {
    use_machine("hgx-h200-8");
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess);   // a success does not clear it
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaPeekAtLastError() == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(0, 1));   // the second call changed nothing
}

TEST_CASE("cudaDeviceDisablePeerAccess of a pair never enabled, or of itself, returns 705") {
    use_machine("hgx-h200-8");
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
    CHECK(cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled);
    use_machine("pcie-4");
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
}

TEST_CASE("cudaDeviceDisablePeerAccess after a successful disable returns 705") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
    CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 1));
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
    // A disabled pair can be enabled again.
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
}

TEST_CASE("cudaDeviceDisablePeerAccess(invalid) returns 101") {
    use_machine("h200");
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorInvalidDevice);
    CHECK(cudaDeviceDisablePeerAccess(-1) == cudaErrorInvalidDevice);
    use_machine("hgx-h200-8");
    CHECK(cudaDeviceDisablePeerAccess(8) == cudaErrorInvalidDevice);
}

TEST_CASE("peer access is one-way: enabling 0->1 with device 0 current does not enable 1->0") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(0, 1));
    CHECK_FALSE(mgpu::sim::peer_access_enabled(1, 0));
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    // Nothing was enabled from device 1 yet, so there is nothing to disable ...
    CHECK(cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled);
    // ... and enabling the reverse direction is a first enable, not a repeat.
    CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(1, 0));
}

TEST_CASE("cudaDeviceEnablePeerAccess enables from the current device, not from device 0") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(5) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(2, 0) == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(5, 2));
    CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 2));
    CHECK_FALSE(mgpu::sim::peer_access_enabled(2, 5));
}

TEST_CASE("cudaMemcpyPeer(p, 0, p, 0, 0) returns 0") {
    use_machine("h200");
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, 256) == cudaSuccess);
    CHECK(cudaMemcpyPeer(p, 0, p, 0, 0) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
}

namespace {

// Copies random data from device `src` to device `dst` with cudaMemcpyPeer (peer access never
// enabled) and reads it back; the bytes must arrive unchanged.
void check_peer_copy_without_access(int src, int dst, std::size_t count) {
    const auto input = conformance::random_floats(count, 1000u + static_cast<unsigned>(src * 10 + dst));
    const std::size_t bytes = count * sizeof(float);
    float* on_src = nullptr;
    float* on_dst = nullptr;
    REQUIRE(cudaSetDevice(src) == cudaSuccess);
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&on_src), bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(on_src, input.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaSetDevice(dst) == cudaSuccess);
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&on_dst), bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(src) == cudaSuccess);

    CHECK(cudaMemcpyPeer(on_dst, dst, on_src, src, bytes) == cudaSuccess);

    std::vector<float> output(count, -1.0f);
    REQUIRE(cudaSetDevice(dst) == cudaSuccess);
    REQUIRE(cudaMemcpy(output.data(), on_dst, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(std::memcmp(output.data(), input.data(), bytes) == 0);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaFree(on_dst) == cudaSuccess);
    REQUIRE(cudaSetDevice(src) == cudaSuccess);
    CHECK(cudaFree(on_src) == cudaSuccess);
}

}  // namespace

TEST_CASE("cudaMemcpyPeer without peer access is still correct: across NVLink islands") {
    use_machine("islands-2x2");
    check_peer_copy_without_access(0, 2, 100003);
    check_peer_copy_without_access(3, 1, 1);
}

TEST_CASE("cudaMemcpyPeer without peer access is still correct: GPUs on PCIe without P2P") {
    use_machine("pcie-4");
    check_peer_copy_without_access(0, 1, 65536);
    check_peer_copy_without_access(2, 3, 777);
}

TEST_CASE("cudaMemcpyPeer without peer access is still correct: boards of different architectures") {
    use_machine("mixed-3");
    check_peer_copy_without_access(0, 2, 33333);
    check_peer_copy_without_access(2, 1, 2);
}

TEST_CASE("cudaMemcpyPeer without peer access is still correct: a pair that could peer but was not enabled") {
    use_machine("hgx-h200-8");
    check_peer_copy_without_access(6, 1, 4099);
}

TEST_CASE("cudaMemcpyPeer without peer access is staged through host memory") {
    use_machine("pcie-4");
    const std::size_t bytes = 1 << 20;
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    mgpu::sim::clear_trace();
    REQUIRE(cudaMemcpyPeer(b, 1, a, 0, bytes) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    auto copy = conformance::last_op_of_kind(mgpu::trace::OpKind::MemcpyPeer);
    REQUIRE(copy.has_value());
    CHECK(copy->staged);
    CHECK(copy->src_device == 0);
    CHECK(copy->dst_device == 1);
    CHECK(copy->bytes == bytes);
}

TEST_CASE("cudaMemcpyPeer with peer access enabled over NVLink is not staged") {
    use_machine("hgx-h200-8");
    const std::size_t count = 300007;
    const std::size_t bytes = count * sizeof(float);
    const auto input = conformance::random_floats(count, 77);
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(a, input.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    mgpu::sim::clear_trace();
    REQUIRE(cudaMemcpyPeer(b, 1, a, 0, bytes) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    auto copy = conformance::last_op_of_kind(mgpu::trace::OpKind::MemcpyPeer);
    REQUIRE(copy.has_value());
    CHECK_FALSE(copy->staged);
    std::vector<float> output(count, -1.0f);
    REQUIRE(cudaMemcpy(output.data(), b, bytes, cudaMemcpyDefault) == cudaSuccess);
    CHECK(std::memcmp(output.data(), input.data(), bytes) == 0);
}

TEST_CASE("cudaMemcpyPeerAsync without peer access is still correct") {
    use_machine("islands-2x2");
    const std::size_t count = 5001;
    const std::size_t bytes = count * sizeof(float);
    const auto input = conformance::random_floats(count, 5);
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(a, input.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    CHECK(cudaMemcpyPeerAsync(b, 2, a, 1, bytes, stream) == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    std::vector<float> output(count, -1.0f);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    REQUIRE(cudaMemcpy(output.data(), b, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(std::memcmp(output.data(), input.data(), bytes) == 0);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
