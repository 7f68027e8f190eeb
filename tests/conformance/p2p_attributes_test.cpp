// cudaDeviceGetP2PAttribute (access supported, performance rank, native atomics) on every
// multi-GPU preset, consistent with cudaDeviceCanAccessPeer and with how each machine is built:
// NVSwitch (all pairs peer over NVLink), PCIe without P2P (none), two NVLink islands (pairs
// 0-1 and 2-3 only), mixed boards (no pair). The topologyQuery sample reads these three.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

constexpr int kUnwritten = 12345;

int attribute(cudaDeviceP2PAttr which, int src, int dst) {
    int value = kUnwritten;
    REQUIRE(cudaDeviceGetP2PAttribute(&value, which, src, dst) == cudaSuccess);
    return value;
}

int can_access(int src, int dst) {
    int can = kUnwritten;
    REQUIRE(cudaDeviceCanAccessPeer(&can, src, dst) == cudaSuccess);
    return can;
}

// Checks every ordered pair against `peers(a, b)`: whether the pair is an NVLink peer pair.
void check_preset(const std::string& preset, int devices, const std::function<bool(int, int)>& nvlink_peers) {
    use_machine(preset);
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    REQUIRE(count == devices);
    int nvlink_rank = -1;
    for (int a = 0; a < devices; ++a)
        for (int b = 0; b < devices; ++b) {
            if (a == b) continue;
            CAPTURE(preset);
            CAPTURE(a);
            CAPTURE(b);
            const bool peers = nvlink_peers(a, b);
            const int access = attribute(cudaDevP2PAttrAccessSupported, a, b);
            const int atomics = attribute(cudaDevP2PAttrNativeAtomicSupported, a, b);
            const int rank = attribute(cudaDevP2PAttrPerformanceRank, a, b);
            CHECK(access == (peers ? 1 : 0));
            CHECK(access == can_access(a, b));
            CHECK(atomics == (peers ? 1 : 0));   // NVLink carries native atomics; no link, no atomics
            CHECK(rank >= 0);
            if (!peers) CHECK(rank == 0);
            if (peers) {
                // Every NVLink pair of one preset is built alike, so they rank alike.
                if (nvlink_rank < 0) nvlink_rank = rank;
                CHECK(rank == nvlink_rank);
            }
            // Both directions of a link are the same link.
            CHECK(access == attribute(cudaDevP2PAttrAccessSupported, b, a));
            CHECK(atomics == attribute(cudaDevP2PAttrNativeAtomicSupported, b, a));
        }
}

}  // namespace

TEST_CASE("cudaDeviceGetP2PAttribute on 8 x H200 on NVSwitch: every pair has access and native atomics") {
    check_preset("hgx-h200-8", 8, [](int, int) { return true; });
}

TEST_CASE("cudaDeviceGetP2PAttribute on 4 GPUs on PCIe without P2P: no pair has access or atomics") {
    check_preset("pcie-4", 4, [](int, int) { return false; });
}

TEST_CASE("cudaDeviceGetP2PAttribute on two NVLink islands: access and atomics inside an island only") {
    check_preset("islands-2x2", 4, [](int a, int b) { return a / 2 == b / 2; });
}

TEST_CASE("cudaDeviceGetP2PAttribute on the mixed machine: boards of different architectures do not peer") {
    check_preset("mixed-3", 3, [](int, int) { return false; });
}

TEST_CASE("cudaDeviceGetP2PAttribute agrees with the machine description on every preset") {
    for (const auto& preset : conformance::kGpuPresets) {
        CAPTURE(preset);
        if (!conformance::use_machine_if_hostable(preset)) continue;
        const auto& spec = mgpu::sim::machine();
        const int n = static_cast<int>(spec.devices.size());
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                if (a == b) continue;
                CAPTURE(a);
                CAPTURE(b);
                const auto& link = spec.links[a][b];
                CHECK(attribute(cudaDevP2PAttrAccessSupported, a, b) == (link.can_peer ? 1 : 0));
                CHECK(attribute(cudaDevP2PAttrNativeAtomicSupported, a, b) == (link.native_atomics ? 1 : 0));
                CHECK(attribute(cudaDevP2PAttrPerformanceRank, a, b) == link.perf_rank);
            }
    }
}

TEST_CASE("cudaDeviceGetP2PAttribute of a device with itself returns 101") {
    // NVIDIA's reference: cudaErrorInvalidDevice "if srcDevice or dstDevice are not valid or if they
    // represent the same device".
    use_machine("hgx-h200-8");
    int value = kUnwritten;
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 2, 2) == cudaErrorInvalidDevice);
}

TEST_CASE("cudaDeviceGetP2PAttribute with a device that does not exist returns 101") {
    use_machine("h200");
    int value = kUnwritten;
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrAccessSupported, 0, 1) == cudaErrorInvalidDevice);
    use_machine("hgx-h200-8");
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, -1, 0) == cudaErrorInvalidDevice);
    CHECK(cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, 0, 8) == cudaErrorInvalidDevice);
}

TEST_CASE("cudaDeviceGetP2PAttribute describes the pair, not whether access was enabled") {
    use_machine("hgx-h200-8");
    CHECK(attribute(cudaDevP2PAttrAccessSupported, 0, 1) == 1);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(attribute(cudaDevP2PAttrAccessSupported, 0, 1) == 1);
    REQUIRE(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
    CHECK(attribute(cudaDevP2PAttrAccessSupported, 0, 1) == 1);
}
