// What the trace records and its Chrome trace export.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "runtime_test_support.h"

using runtime_test::bring_up;

TEST_CASE("API calls carry their site, arguments in order, device and result") {
    bring_up("hgx-h200-8");
    cudaSetDevice(2);
    const int line = __LINE__ + 1;
    cudaDeviceEnablePeerAccess(5, 0);
    const auto calls = mgpu::sim::trace().calls_named("cudaDeviceEnablePeerAccess");
    REQUIRE(calls.size() == 1);
    const mgpu::trace::ApiCall& call = *calls[0];
    CHECK(call.line == line);
    CHECK(std::string(call.file).find("trace_test.cpp") != std::string::npos);
    CHECK(call.args == std::vector<long long>{5, 0});
    CHECK(call.device == 2);
    CHECK(call.result == 0);
    CHECK(call.text == "cudaDeviceEnablePeerAccess(peerDevice=5, flags=0)");
    CHECK(call.end_us > call.begin_us);
}

TEST_CASE("streams and events get stable trace ids; device ops name their stream") {
    bring_up("h200");
    cudaStream_t s;
    cudaStreamCreate(&s);
    int* d = nullptr;
    cudaMalloc(&d, 64);
    cudaMemsetAsync(d, 0, 64, s);
    cudaMemsetAsync(d, 1, 64);
    const auto memsets = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::Memset);
    REQUIRE(memsets.size() == 2);
    CHECK(memsets[0]->stream >= 16);
    CHECK(memsets[1]->stream == mgpu::trace::kLegacyStream);
    CHECK(memsets[1]->start_us >= memsets[0]->end_us);   // the legacy stream waits for a blocking stream
    const auto calls = mgpu::sim::trace().calls_named("cudaMemsetAsync");
    REQUIRE(calls.size() == 2);
    CHECK(calls[0]->stream == memsets[0]->stream);
    CHECK(calls[0]->args.back() == static_cast<long long>(memsets[0]->stream));
}

TEST_CASE("the Chrome trace export is JSON with complete events for calls and device work") {
    bring_up("h200");
    int* d = nullptr;
    cudaMalloc(&d, 64);
    cudaMemset(d, 0, 64);
    cudaDeviceSynchronize();
    const auto document = nlohmann::json::parse(mgpu::sim::trace().to_chrome_json());
    REQUIRE(document.contains("traceEvents"));
    int api = 0, device = 0;
    for (const auto& event : document["traceEvents"]) {
        if (event["ph"] == "X" && event["cat"] == "api") ++api;
        if (event["ph"] == "X" && event["cat"] == "memset") ++device;
    }
    CHECK(api == 3);
    CHECK(device == 1);
}
