// cuda-facts.md, "Errors and the last error": bad launch configurations (1 block of 2048 threads,
// grid 0, too much dynamic shared memory) give 1 from cudaGetLastError (the header says 9).
// A bad launch runs nothing and is not sticky.
#include <doctest/doctest.h>

#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::use_machine;

namespace {

constexpr unsigned kCount = 512;
constexpr float kMarker = 0.125f;   // what the output holds before any kernel writes it

struct ReverseScene {
    float* in = nullptr;
    float* out = nullptr;
    std::vector<float> values;

    ReverseScene() {
        values = conformance::random_floats(kCount, 2048);
        REQUIRE(cudaMalloc(&in, kCount * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMalloc(&out, kCount * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMemcpy(in, values.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
        const std::vector<float> marker(kCount, kMarker);
        REQUIRE(cudaMemcpy(out, marker.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    }

    std::vector<float> output() const {
        std::vector<float> got(kCount, 0.0f);
        REQUIRE(cudaMemcpy(got.data(), out, kCount * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
        return got;
    }

    // Nothing was written: the output still holds the marker.
    void check_untouched() const { CHECK(output() == std::vector<float>(kCount, kMarker)); }

    // A good launch after the bad one works and gives the reversed input.
    void check_good_launch_works() const {
        reverse_through_shared<<<1, kCount, kCount * sizeof(float)>>>(in, out, kCount);
        CHECK(cudaGetLastError() == cudaSuccess);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        const auto got = output();
        for (unsigned i = 0; i < kCount; ++i) {
            CAPTURE(i);
            REQUIRE(got[i] == values[kCount - 1 - i]);
        }
    }
};

}  // namespace

TEST_CASE("a launch of 1 block of 2048 threads gives 1 (not 9) from cudaGetLastError") {
    use_machine("h200");
    ReverseScene scene;
    reverse_through_shared<<<1, 2048, kCount * sizeof(float)>>>(scene.in, scene.out, kCount);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    scene.check_untouched();
    scene.check_good_launch_works();
}

TEST_CASE("a launch with a grid of 0 blocks gives 1 (not 9) from cudaGetLastError") {
    use_machine("h200");
    ReverseScene scene;
    reverse_through_shared<<<0, kCount, kCount * sizeof(float)>>>(scene.in, scene.out, kCount);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    scene.check_untouched();
    scene.check_good_launch_works();
}

TEST_CASE("a launch with a grid of 0 blocks in y gives 1 (not 9) from cudaGetLastError") {
    use_machine("h200");
    ReverseScene scene;
    reverse_through_shared<<<dim3(1, 0, 1), kCount, kCount * sizeof(float)>>>(scene.in, scene.out, kCount);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    scene.check_untouched();
}

TEST_CASE("a launch with more dynamic shared memory than a block may have gives 1 (not 9) from cudaGetLastError") {
    use_machine("h200");
    ReverseScene scene;
    const std::size_t too_much = 232448 + 4096;   // beyond sharedMemPerBlockOptin
    reverse_through_shared<<<1, kCount, too_much>>>(scene.in, scene.out, kCount);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    scene.check_untouched();
    scene.check_good_launch_works();
}

TEST_CASE("a bad launch configuration is not sticky: later calls on the device succeed") {
    use_machine("h200");
    ReverseScene scene;
    reverse_through_shared<<<1, 2048, 0>>>(scene.in, scene.out, kCount);
    REQUIRE(cudaGetLastError() == cudaErrorInvalidValue);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 4096) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("a launch of 1024 threads per block, the limit, is accepted") {
    use_machine("h200");
    ReverseScene scene;
    reverse_through_shared<<<1, 1024, kCount * sizeof(float)>>>(scene.in, scene.out, kCount);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = scene.output();
    for (unsigned i = 0; i < kCount; ++i) {
        CAPTURE(i);
        REQUIRE(got[i] == scene.values[kCount - 1 - i]);
    }
}
