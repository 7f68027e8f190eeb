// Peer access codes, peer copies with and without P2P, and kernels that reach another device.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "runtime_test_support.h"

using runtime_test::bring_up;
using runtime_test::launch;

TEST_CASE("cudaDeviceCanAccessPeer answers per ordered pair") {
    bring_up("hgx-h200-8");
    int can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 1);
    can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, -1) == cudaErrorInvalidDevice);
    CHECK(can == -1);
    bring_up("h200");
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaErrorInvalidDevice);
    CHECK(can == -1);
    bring_up("pcie-4");
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 0);
}

TEST_CASE("enable and disable give the hardware's codes") {
    bring_up("hgx-h200-8");
    CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessUnsupported);
    CHECK(cudaDeviceEnablePeerAccess(1, 1) == cudaErrorInvalidValue);
    CHECK(cudaDeviceEnablePeerAccess(9, 1) == cudaErrorInvalidValue);   // flags are checked first
    CHECK(cudaDeviceEnablePeerAccess(9, 0) == cudaErrorInvalidDevice);
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaErrorPeerAccessNotEnabled);
    CHECK(cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled);
    CHECK(cudaDeviceDisablePeerAccess(9) == cudaErrorInvalidDevice);
    cudaGetLastError();
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(mgpu::sim::peer_access_enabled(0, 1));
    CHECK_FALSE(mgpu::sim::peer_access_enabled(1, 0));   // one way only
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
    CHECK(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
    CHECK_FALSE(mgpu::sim::peer_access_enabled(0, 1));
}

TEST_CASE("a pair that cannot peer gives 217 on enable") {
    bring_up("pcie-4");
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
    mgpu::sim::Faults faults;
    faults.no_peer_pairs = "0-1";
    bring_up("hgx-h200-8", "eager", faults);
    int can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 0) == cudaSuccess);
    CHECK(can == 0);
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 2) == cudaSuccess);
    CHECK(can == 1);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
}

TEST_CASE("the Nth enable gives 711 on request") {
    mgpu::sim::Faults faults;
    faults.enable_gives_711_at = 2;
    bring_up("hgx-h200-8", "eager", faults);
    CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(cudaDeviceEnablePeerAccess(2, 0) == cudaErrorTooManyPeers);
    CHECK(cudaDeviceEnablePeerAccess(3, 0) == cudaSuccess);
}

TEST_CASE("peer copies are correct with and without P2P, and staged without it") {
    for (const char* topology : {"hgx-h200-8", "pcie-4"}) {
        CAPTURE(topology);
        bring_up(topology, "lazy");
        std::vector<float> in(4096), out(4096, 0.0f);
        std::iota(in.begin(), in.end(), 0.5f);
        float *a = nullptr, *b = nullptr;
        cudaSetDevice(0);
        REQUIRE(cudaMalloc(&a, in.size() * sizeof(float)) == cudaSuccess);
        cudaMemcpy(a, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice);
        cudaSetDevice(1);
        REQUIRE(cudaMalloc(&b, in.size() * sizeof(float)) == cudaSuccess);
        int can = 0;
        cudaDeviceCanAccessPeer(&can, 1, 0);
        if (can) REQUIRE(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
        mgpu::sim::clear_trace();
        CHECK(cudaMemcpyPeer(b, 1, a, 0, in.size() * sizeof(float)) == cudaSuccess);
        CHECK(cudaMemcpy(out.data(), b, out.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(out == in);
        auto peers = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::MemcpyPeer);
        REQUIRE(peers.size() == 1);
        CHECK(peers[0]->staged == (can == 0));
        CHECK(peers[0]->src_device == 0);
        CHECK(peers[0]->dst_device == 1);
        CHECK(cudaMemcpyPeer(a, 0, a, 0, 0) == cudaSuccess);
    }
}

TEST_CASE("a kernel reaching another device's memory without peer access faults with 700, sticky") {
    bring_up("hgx-h200-8");
    cudaSetDevice(1);
    int* remote = nullptr;
    REQUIRE(cudaMalloc(&remote, 64 * sizeof(int)) == cudaSuccess);
    cudaSetDevice(0);
    runtime_test::StderrCapture capture;
    bool ran = false;
    CHECK(launch("read_remote", 1, 64, nullptr, {remote}, [&] { ran = true; }) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    const std::string message = capture.text();
    CHECK_FALSE(ran);
    CHECK(message.find("cudaDeviceEnablePeerAccess(1") != std::string::npos);
    CHECK(message.find("device 1") != std::string::npos);
    CHECK(message.find("cudaSetDevice(0)") != std::string::npos);
    CHECK(message.find("runtime_test.cu:42") != std::string::npos);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 16) == cudaErrorIllegalAddress);
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 1);
    CHECK(cudaDeviceReset() == cudaSuccess);
    CHECK(cudaMalloc(&p, 16) == cudaSuccess);
}

TEST_CASE("with peer access enabled the kernel reads the peer's memory") {
    bring_up("hgx-h200-8");
    cudaSetDevice(1);
    int* remote = nullptr;
    REQUIRE(cudaMalloc(&remote, 4 * sizeof(int)) == cudaSuccess);
    const int values[4] = {3, 1, 4, 1};
    cudaMemcpy(remote, values, sizeof values, cudaMemcpyHostToDevice);
    cudaSetDevice(0);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    int sum = 0;
    CHECK(launch("sum_remote", 1, 1, nullptr, {remote}, [&] {
              for (int i = 0; i < 4; ++i) sum += remote[i];
          }) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(sum == 9);
    auto kernels = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::Kernel);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0]->peer_access);
}

TEST_CASE("memory touched without appearing among the arguments is caught by the guard") {
    bring_up("hgx-h200-8");
    cudaSetDevice(1);
    int* remote = nullptr;
    REQUIRE(cudaMalloc(&remote, 4 * sizeof(int)) == cudaSuccess);
    cudaSetDevice(0);
    struct Hidden {
        int* pointer;
    } hidden{remote};
    runtime_test::StderrCapture capture;
    CHECK(launch("hidden_read", 1, 1, nullptr, {}, [hidden] { hidden.pointer[0] = 5; }) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(capture.text().find("cudaDeviceEnablePeerAccess") != std::string::npos);
}
