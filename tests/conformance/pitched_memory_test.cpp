// Pitched memory: cudaMallocPitch and cudaMalloc3D choose a pitch, cudaMemcpy2D/2DAsync/3D copy
// rows between pitched and packed buffers without touching the padding, cudaMemset2D fills rows,
// and a width beyond a pitch gives cudaErrorInvalidPitchValue (12) from a copy, 1 from a memset
// (as an H200 answers, bench/h200/runtime_surface_probe.cu).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

std::vector<unsigned char> pattern(std::size_t count) {
    std::vector<unsigned char> bytes(count);
    for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
    return bytes;
}

}  // namespace

TEST_CASE("cudaMallocPitch rounds each row up to 512 bytes") {
    use_machine("h200");
    void* p = nullptr;
    std::size_t pitch = 0;
    REQUIRE(cudaMallocPitch(&p, &pitch, 100, 10) == cudaSuccess);
    CHECK(pitch == 512);
    CHECK(cudaFree(p) == cudaSuccess);
    REQUIRE(cudaMallocPitch(&p, &pitch, 513, 3) == cudaSuccess);
    CHECK(pitch == 1024);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("a 2D copy into pitched memory and back moves the rows and leaves the padding alone") {
    use_machine("h200");
    constexpr std::size_t kWidth = 100, kHeight = 10;
    const auto packed = pattern(kWidth * kHeight);
    unsigned char* device = nullptr;
    std::size_t pitch = 0;
    REQUIRE(cudaMallocPitch(reinterpret_cast<void**>(&device), &pitch, kWidth, kHeight) == cudaSuccess);
    REQUIRE(cudaMemset(device, 0xAB, pitch * kHeight) == cudaSuccess);
    CHECK(cudaMemcpy2D(device, pitch, packed.data(), kWidth, kWidth, kHeight, cudaMemcpyHostToDevice) == cudaSuccess);

    std::vector<unsigned char> whole(pitch * kHeight);
    REQUIRE(cudaMemcpy(whole.data(), device, whole.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (std::size_t row = 0; row < kHeight; ++row) {
        CAPTURE(row);
        CHECK(std::memcmp(&whole[row * pitch], &packed[row * kWidth], kWidth) == 0);
        CHECK(whole[row * pitch + kWidth] == 0xAB);
        CHECK(whole[row * pitch + pitch - 1] == 0xAB);
    }

    std::vector<unsigned char> back(kWidth * kHeight, 0);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    CHECK(cudaMemcpy2DAsync(back.data(), kWidth, device, pitch, kWidth, kHeight, cudaMemcpyDeviceToHost, stream) ==
          cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(back == packed);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("cudaMemset2D fills the width of each row only") {
    use_machine("h200");
    constexpr std::size_t kWidth = 40, kHeight = 4;
    unsigned char* device = nullptr;
    std::size_t pitch = 0;
    REQUIRE(cudaMallocPitch(reinterpret_cast<void**>(&device), &pitch, kWidth, kHeight) == cudaSuccess);
    REQUIRE(cudaMemset(device, 0, pitch * kHeight) == cudaSuccess);
    CHECK(cudaMemset2D(device, pitch, 7, kWidth, kHeight) == cudaSuccess);
    std::vector<unsigned char> whole(pitch * kHeight);
    REQUIRE(cudaMemcpy(whole.data(), device, whole.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (std::size_t row = 0; row < kHeight; ++row) {
        CAPTURE(row);
        CHECK(whole[row * pitch] == 7);
        CHECK(whole[row * pitch + kWidth - 1] == 7);
        CHECK(whole[row * pitch + kWidth] == 0);
    }
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("a width larger than a pitch: 12 from cudaMemcpy2D, 1 from cudaMemset2D; no rows or no width copies nothing") {
    use_machine("h200");
    unsigned char* device = nullptr;
    std::size_t pitch = 0;
    REQUIRE(cudaMallocPitch(reinterpret_cast<void**>(&device), &pitch, 100, 10) == cudaSuccess);
    const auto packed = pattern(1000);
    CHECK(cudaMemcpy2D(device, 50, packed.data(), 100, 100, 10, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidPitchValue);
    CHECK(cudaMemcpy2D(device, pitch, packed.data(), 50, 100, 10, cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
    CHECK(cudaMemset2D(device, 50, 7, 100, 10) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaMemcpy2D(device, pitch, packed.data(), 100, 100, 0, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy2D(device, pitch, packed.data(), 100, 0, 10, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy2D(device, pitch, packed.data(), 100, 100, 10, static_cast<cudaMemcpyKind>(7)) ==
          cudaErrorInvalidMemcpyDirection);
    CHECK(cudaGetLastError() == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("cudaMalloc3D and cudaMemcpy3D move a box of slices to the device and back") {
    use_machine("h200");
    const cudaExtent extent = make_cudaExtent(64, 4, 3);
    cudaPitchedPtr device{};
    REQUIRE(cudaMalloc3D(&device, extent) == cudaSuccess);
    CHECK(device.pitch == 512);
    CHECK(device.xsize == 64);
    CHECK(device.ysize == 4);
    auto packed = pattern(64 * 4 * 3);
    cudaMemcpy3DParms up{};
    up.srcPtr = make_cudaPitchedPtr(packed.data(), 64, 64, 4);
    up.dstPtr = device;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up) == cudaSuccess);

    std::vector<unsigned char> back(packed.size(), 0);
    cudaMemcpy3DParms down{};
    down.srcPtr = device;
    down.dstPtr = make_cudaPitchedPtr(back.data(), 64, 64, 4);
    down.extent = extent;
    down.kind = cudaMemcpyDefault;
    CHECK(cudaMemcpy3D(&down) == cudaSuccess);
    CHECK(back == packed);

    cudaMemcpy3DParms empty{};   // an empty extent copies nothing and succeeds; no parameters at all are 1
    CHECK(cudaMemcpy3D(&empty) == cudaSuccess);
    CHECK(cudaMemcpy3D(nullptr) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFree(device.ptr) == cudaSuccess);
}
