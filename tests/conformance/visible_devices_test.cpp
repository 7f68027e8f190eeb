// cuda-facts.md, "Errors and the last error", CUDA_VISIBLE_DEVICES row: unset gives all
// devices; "" gives 100; a list enumerates in list order and stops at the first invalid entry.
// The variable takes effect where the runtime reads it: devices_seen.h starts a new process for
// it on real GPUs; cases that renumber several GPUs set it before reset_machine (simulator only).
#include <doctest/doctest.h>

#include <string>

#include "conformance_support.h"
#include "devices_seen.h"

using conformance::ScopedEnvironmentVariable;

namespace {

constexpr const char* kVariable = "CUDA_VISIBLE_DEVICES";
constexpr int kUnwritten = conformance::kUnwrittenCount;   // what devices_seen leaves in an unwritten count

int device_count_or(int if_failed) {
    int count = kUnwritten;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return if_failed;
    return count;
}

}  // namespace

TEST_CASE("CUDA_VISIBLE_DEVICES unset gives all devices") {
    for (const char* preset : {"hgx-h200-8", "h200"}) {
        CAPTURE(preset);
        const auto seen = conformance::devices_seen_if_hostable(preset, nullptr);
        if (!seen) continue;
        CHECK(seen->count_status == cudaSuccess);
        CHECK(seen->count == static_cast<int>(mgpu::sim::load_machine(preset).devices.size()));
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES=\"\" gives 100 (no device)") {
    for (const char* preset : {"h200", "hgx-h200-8"}) {
        CAPTURE(preset);
        const auto seen = conformance::devices_seen_if_hostable(preset, "");
        if (!seen) continue;
        CHECK(seen->count_status == cudaErrorNoDevice);
        CHECK(seen->last_error == cudaErrorNoDevice);
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES=\"0,1\" on a one-GPU machine gives 1 device") {
    const conformance::DevicesSeen seen = conformance::devices_seen("h200", "0,1");
    CHECK(seen.count_status == cudaSuccess);
    CHECK(seen.count == 1);
}

TEST_CASE("CUDA_VISIBLE_DEVICES=\"1\" on a one-GPU machine gives 100") {
    CHECK(conformance::devices_seen("h200", "1").count_status == cudaErrorNoDevice);
}

TEST_CASE("CUDA_VISIBLE_DEVICES stops at the first invalid entry") {
    const conformance::DevicesSeen seen = conformance::devices_seen("hgx-h200-8", "2,8,3");
    CHECK(seen.count_status == cudaSuccess);
    CHECK(seen.count == 1);
}

TEST_CASE("CUDA_VISIBLE_DEVICES enumerates the listed devices in list order") {
    SUBCASE("mixed machine, \"2,0\"") {
        const auto all = mgpu::sim::load_machine("mixed-3");
        const conformance::DevicesSeen seen = conformance::devices_seen("mixed-3", "2,0");
        REQUIRE(seen.count_status == cudaSuccess);
        REQUIRE(seen.devices.size() == 2);
        CHECK(seen.devices[0].name == all.devices[2].name);
        CHECK(seen.devices[0].total_mem == all.devices[2].total_mem);
        CHECK(seen.devices[0].major == all.devices[2].major);
        CHECK(seen.devices[0].minor == all.devices[2].minor);
        CHECK(seen.devices[1].name == all.devices[0].name);
        CHECK(seen.devices[1].total_mem == all.devices[0].total_mem);
    }
    SUBCASE("8 x H200, \"5,3,7\"") {
        const auto all = mgpu::sim::load_machine("hgx-h200-8");
        const conformance::DevicesSeen seen = conformance::devices_seen("hgx-h200-8", "5,3,7");
        REQUIRE(seen.count_status == cudaSuccess);
        REQUIRE(seen.devices.size() == 3);
        const int physical[] = {5, 3, 7};
        for (int d = 0; d < 3; ++d) {
            CAPTURE(d);
            CHECK(seen.devices[d].pci_bus == all.devices[physical[d]].pci_bus);
            CHECK(seen.devices[d].pci_device == all.devices[physical[d]].pci_device);
            CHECK(seen.devices[d].pci_domain == all.devices[physical[d]].pci_domain);
        }
        // Device numbers beyond the list are gone.
        CHECK(seen.set_past_last == cudaErrorInvalidDevice);
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES renumbers peer pairs: the links follow the physical devices") {
    SUBCASE("\"3,1\" on two NVLink islands: the two visible devices sit in different islands") {
        ScopedEnvironmentVariable visible(kVariable, "3,1");
        conformance::use_machine("islands-2x2", "eager", {}, true);
        REQUIRE(device_count_or(-1) == 2);
        int can = kUnwritten;
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
        CHECK(can == 0);
        CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
    }
    SUBCASE("\"3,2\" on two NVLink islands: both visible devices sit in one island") {
        ScopedEnvironmentVariable visible(kVariable, "3,2");
        conformance::use_machine("islands-2x2", "eager", {}, true);
        REQUIRE(device_count_or(-1) == 2);
        int can = kUnwritten;
        CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
        CHECK(can == 1);
        CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES is ignored when the harness asks for the whole machine") {
    ScopedEnvironmentVariable visible(kVariable, "0");
    conformance::use_machine("hgx-h200-8", "eager", {}, /*apply_visible_devices=*/false);
    CHECK(device_count_or(-1) == 8);
}
