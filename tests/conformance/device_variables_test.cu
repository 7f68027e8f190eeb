// __device__ and __constant__ variables (CUDA C++ Programming Guide, "Variable Memory Space
// Specifiers"; CUDA Runtime API, "Memory Management"): each device holds its own copy,
// initialised from the declaration; cudaMemcpyToSymbol / FromSymbol (and their Async forms) reach
// the current device's copy, with an offset, and answer cudaErrorInvalidSymbol for an address
// that is not a variable, cudaErrorInvalidMemcpyDirection for a kind that points the wrong way and
// cudaErrorInvalidValue for bytes past the variable's end; cudaGetSymbolAddress gives a device
// pointer to the copy and cudaGetSymbolSize its size.
#include <doctest/doctest.h>

#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

struct Settings {
    int count;
    float scale;
    int offsets[3];
};

__constant__ float weights[8] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f};
__constant__ Settings settings = {4, 0.5f, {10, 20, 30}};
__device__ int launches_seen;            // zero-initialised, as a namespace-scope variable is
__device__ unsigned long long hits[4];
__device__ int marker = 7, spare[2] = {5, 6};

__global__ void weighted(const float* in, float* out) {
    const int i = static_cast<int>(threadIdx.x);
    out[i] = in[i] * weights[i] * settings.scale + static_cast<float>(settings.offsets[i % 3]);
    if (i == 0) launches_seen += 1;
    atomicAdd(&hits[i % 4], 1ull);
}

__global__ void read_marker(int* out) { *out = marker + spare[0] + spare[1]; }

__global__ void write_marker(int value) { marker = value; }

__global__ void through_pointer(const float* table, float* out) { out[threadIdx.x] = table[threadIdx.x]; }

int marker_on(int device) {
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    int* out = nullptr;
    REQUIRE(cudaMalloc(&out, sizeof(int)) == cudaSuccess);
    read_marker<<<1, 1>>>(out);
    int value = 0;
    REQUIRE(cudaMemcpy(&value, out, sizeof value, cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaFree(out) == cudaSuccess);
    return value;
}

}  // namespace

TEST_CASE("kernels read __constant__ and __device__ variables as they were declared") {
    use_machine("h200");
    const std::vector<float> in = {1, 1, 1, 1, 2, 2, 2, 2};
    float *d_in = nullptr, *d_out = nullptr;
    REQUIRE(cudaMalloc(&d_in, 8 * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMalloc(&d_out, 8 * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(d_in, in.data(), 8 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    weighted<<<1, 8>>>(d_in, d_out);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<float> out(8);
    REQUIRE(cudaMemcpy(out.data(), d_out, 8 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    // in * weight * 0.5 + offsets[i % 3]
    CHECK(out == std::vector<float>{10.5f, 21.0f, 31.5f, 12.0f, 25.0f, 36.0f, 17.0f, 28.0f});

    int seen = -1;
    REQUIRE(cudaMemcpyFromSymbol(&seen, launches_seen, sizeof seen) == cudaSuccess);
    CHECK(seen == 1);
    unsigned long long counted[4] = {};
    REQUIRE(cudaMemcpyFromSymbol(counted, hits, sizeof hits) == cudaSuccess);
    CHECK(counted[0] == 2);
    CHECK(counted[3] == 2);
    CHECK(marker_on(0) == 7 + 5 + 6);
    REQUIRE(cudaFree(d_in) == cudaSuccess);
    REQUIRE(cudaFree(d_out) == cudaSuccess);
}

TEST_CASE("cudaMemcpyToSymbol writes the variable, at an offset when given one") {
    use_machine("h200");
    const float doubled[8] = {2, 4, 6, 8, 10, 12, 14, 16};
    REQUIRE(cudaMemcpyToSymbol(weights, doubled, sizeof doubled) == cudaSuccess);
    const float last_two[2] = {-1.0f, -2.0f};
    REQUIRE(cudaMemcpyToSymbol(weights, last_two, sizeof last_two, 6 * sizeof(float)) == cudaSuccess);
    float back[8] = {};
    REQUIRE(cudaMemcpyFromSymbol(back, weights, sizeof back) == cudaSuccess);
    CHECK(back[0] == 2.0f);
    CHECK(back[5] == 12.0f);
    CHECK(back[6] == -1.0f);
    CHECK(back[7] == -2.0f);
    float middle = 0;
    REQUIRE(cudaMemcpyFromSymbol(&middle, weights, sizeof middle, 2 * sizeof(float)) == cudaSuccess);
    CHECK(middle == 6.0f);

    const Settings changed = {2, 3.0f, {1, 2, 3}};
    REQUIRE(cudaMemcpyToSymbol(settings, &changed, sizeof changed, 0, cudaMemcpyHostToDevice) == cudaSuccess);
    Settings read{};
    REQUIRE(cudaMemcpyFromSymbol(&read, settings, sizeof read, 0, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(read.scale == 3.0f);
    CHECK(read.offsets[2] == 3);
}

TEST_CASE("the Async forms are ordered on their stream") {
    use_machine("h200");
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    int* pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, 2 * sizeof(int)) == cudaSuccess);
    pinned[0] = 41;
    pinned[1] = 0;
    REQUIRE(cudaMemcpyToSymbolAsync(marker, &pinned[0], sizeof(int), 0, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    write_marker<<<1, 1, 0, stream>>>(42);
    REQUIRE(cudaMemcpyFromSymbolAsync(&pinned[1], marker, sizeof(int), 0, cudaMemcpyDeviceToHost, stream) ==
            cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(pinned[1] == 42);
    REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
    REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("each device has its own copy of a variable") {
    use_machine("hgx-h200-8");
    const int on_device_1 = 100;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMemcpyToSymbol(marker, &on_device_1, sizeof on_device_1) == cudaSuccess);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    write_marker<<<1, 1>>>(200);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);

    CHECK(marker_on(0) == 7 + 5 + 6);     // untouched: the declared value
    CHECK(marker_on(1) == 100 + 5 + 6);   // written from the host with device 1 current
    CHECK(marker_on(2) == 200 + 5 + 6);   // written by a kernel on device 2
    int read = 0;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMemcpyFromSymbol(&read, marker, sizeof read) == cudaSuccess);
    CHECK(read == 100);

    void* address_0 = nullptr;
    void* address_1 = nullptr;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaGetSymbolAddress(&address_0, marker) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaGetSymbolAddress(&address_1, marker) == cudaSuccess);
    CHECK(address_0 != address_1);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, address_1) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeDevice);
    CHECK(attributes.device == 1);
}

TEST_CASE("cudaGetSymbolAddress gives a device pointer that kernels and copies can use") {
    use_machine("h200");
    const float values[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    REQUIRE(cudaMemcpyToSymbol(weights, values, sizeof values) == cudaSuccess);
    float* table = nullptr;
    REQUIRE(cudaGetSymbolAddress(reinterpret_cast<void**>(&table), weights) == cudaSuccess);
    size_t size = 0;
    REQUIRE(cudaGetSymbolSize(&size, weights) == cudaSuccess);
    CHECK(size == 8 * sizeof(float));
    REQUIRE(cudaGetSymbolSize(&size, settings) == cudaSuccess);
    CHECK(size == sizeof(Settings));

    float* out = nullptr;
    REQUIRE(cudaMalloc(&out, 8 * sizeof(float)) == cudaSuccess);
    through_pointer<<<1, 8>>>(table, out);
    float back[8] = {};
    REQUIRE(cudaMemcpy(back, out, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[0] == 8.0f);
    CHECK(back[7] == 1.0f);
    float third = 0;
    REQUIRE(cudaMemcpy(&third, table + 2, sizeof third, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(third == 6.0f);
    REQUIRE(cudaFree(out) == cudaSuccess);
}

TEST_CASE("symbol calls answer the documented errors") {
    use_machine("h200");
    int host_value = 3;
    int* allocation = nullptr;
    REQUIRE(cudaMalloc(&allocation, sizeof(int)) == cudaSuccess);
    // An address that is no variable: a host variable, a cudaMalloc allocation.
    CHECK(cudaMemcpyToSymbol(host_value, &host_value, sizeof host_value) == cudaErrorInvalidSymbol);
    CHECK(cudaGetLastError() == cudaErrorInvalidSymbol);
    CHECK(cudaMemcpyToSymbol(static_cast<const void*>(allocation), &host_value, sizeof host_value) ==
          cudaErrorInvalidSymbol);
    void* address = nullptr;
    CHECK(cudaGetSymbolAddress(&address, host_value) == cudaErrorInvalidSymbol);
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, host_value) == cudaErrorInvalidSymbol);
    // Past the end of the variable.
    const float nine[9] = {};
    CHECK(cudaMemcpyToSymbol(weights, nine, sizeof nine) == cudaErrorInvalidValue);
    CHECK(cudaMemcpyToSymbol(weights, nine, 2 * sizeof(float), 7 * sizeof(float)) == cudaErrorInvalidValue);
    // A kind that copies the wrong way.
    CHECK(cudaMemcpyToSymbol(marker, &host_value, sizeof host_value, 0, cudaMemcpyDeviceToHost) ==
          cudaErrorInvalidMemcpyDirection);
    CHECK(cudaMemcpyFromSymbol(&host_value, marker, sizeof host_value, 0, cudaMemcpyHostToDevice) ==
          cudaErrorInvalidMemcpyDirection);
    // A variable is no allocation of the program's.
    REQUIRE(cudaGetSymbolAddress(&address, marker) == cudaSuccess);
    CHECK(cudaFree(address) == cudaErrorInvalidValue);
    (void)cudaGetLastError();
    REQUIRE(cudaFree(allocation) == cudaSuccess);
}

TEST_CASE("cudaDeviceReset gives the device its declared values again") {
    use_machine("h200");
    const int changed = -5;
    REQUIRE(cudaMemcpyToSymbol(marker, &changed, sizeof changed) == cudaSuccess);
    CHECK(marker_on(0) == -5 + 5 + 6);
    REQUIRE(cudaDeviceReset() == cudaSuccess);
    CHECK(marker_on(0) == 7 + 5 + 6);
}
