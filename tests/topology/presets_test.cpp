// Every preset loads and has the shape FORMAT.md documents; the H200 matches cuda-facts.md.
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "h200_facts.h"
#include "mgpu/sim/machine.h"

using namespace mgpu::sim;

namespace {

void check_is_measured_h200(const DeviceSpec& d)
{
    using namespace h200_facts;
    CHECK(d.name == kName);
    CHECK(d.total_mem == kTotalGlobalMem);
    CHECK(d.free_mem == kFreeAtStart);
    CHECK(d.sm_count == kMultiProcessorCount);
    CHECK(d.major == kMajor);
    CHECK(d.minor == kMinor);
    CHECK(d.max_threads_per_block == kMaxThreadsPerBlock);
    for (int i = 0; i < 3; ++i) {
        CHECK(d.max_threads_dim[i] == kMaxThreadsDim[i]);
        CHECK(d.max_grid_size[i] == kMaxGridSize[i]);
    }
    CHECK(d.shared_mem_per_block == kSharedMemPerBlock);
    CHECK(d.shared_mem_per_block_optin == kSharedMemPerBlockOptin);
    CHECK(d.l2_cache_size == kL2CacheSize);
    CHECK(d.memory_bus_width == kMemoryBusWidth);
    CHECK(d.async_engine_count == kAsyncEngineCount);
    CHECK(d.clock_khz == kClockRateKhz);
    CHECK(d.memory_bandwidth_gbps == kMemoryBoundKernelGbps);
    CHECK(d.d2d_copy_gbps == kD2dCopyGbps);
}

bool symmetric(const MachineSpec& m)
{
    for (std::size_t a = 0; a < m.devices.size(); ++a)
        for (std::size_t b = 0; b < m.devices.size(); ++b)
            if (m.links[a][b].can_peer != m.links[b][a].can_peer || m.links[a][b].type != m.links[b][a].type) return false;
    return true;
}

std::size_t peer_pairs(const MachineSpec& m)
{
    std::size_t count = 0;
    for (std::size_t a = 0; a < m.devices.size(); ++a)
        for (std::size_t b = 0; b < m.devices.size(); ++b) count += m.links[a][b].can_peer;
    return count;
}

}  // namespace

TEST_CASE("the presets are the documented six, in order")
{
    CHECK(preset_names() == std::vector<std::string>{"h200", "hgx-h200-8", "pcie-4", "islands-2x2", "mixed-3", "none"});
}

TEST_CASE("every preset loads with a square link matrix, a default diagonal and distinct devices")
{
    const std::regex uuid_shape("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    for (const auto& name : preset_names()) {
        CAPTURE(name);
        const MachineSpec m = load_machine(name);
        CHECK(m.name == name);
        CHECK(m.source.empty());
        CHECK_FALSE(m.description.empty());
        REQUIRE(m.links.size() == m.devices.size());
        std::set<std::string> uuids, addresses;
        for (std::size_t a = 0; a < m.devices.size(); ++a) {
            REQUIRE(m.links[a].size() == m.devices.size());
            CHECK(m.links[a][a] == LinkSpec{});
            CHECK(std::regex_match(m.devices[a].uuid, uuid_shape));
            uuids.insert(m.devices[a].uuid);
            addresses.insert(pci_bus_id(m.devices[a]));
            CHECK(m.devices[a].free_mem < m.devices[a].total_mem);
        }
        CHECK(uuids.size() == m.devices.size());
        CHECK(addresses.size() == m.devices.size());
        CHECK(symmetric(m));
        // Loading twice gives the same machine: uuids do not change between runs.
        CHECK(load_machine(name).devices == m.devices);
    }
}

TEST_CASE("h200: one device with the measured profile and the measured cost model")
{
    const MachineSpec m = load_machine("h200");
    CHECK(m.has_driver);
    REQUIRE(m.devices.size() == 1);
    check_is_measured_h200(m.devices[0]);
    CHECK(m.devices[0].pci_domain == h200_facts::kPciDomainId);
    CHECK(m.devices[0].pci_bus == h200_facts::kPciBusId);
    CHECK(m.devices[0].pci_device == h200_facts::kPciDeviceId);
    CHECK(pci_bus_id(m.devices[0]) == "0000:00:06.0");
    CHECK(m.cost.h2d_pinned_gbps == h200_facts::kH2dPinnedGbps);
    CHECK(m.cost.h2d_pageable_gbps == h200_facts::kH2dPageableGbps);
    CHECK(m.cost.d2h_pinned_gbps == h200_facts::kD2hPinnedGbps);
    // Pageable copies vary between machines; the preset sits between cuda-facts.md's figure and the
    // H200 calibration's (bench/results/h200-calibration.md), within 10% of the former.
    CHECK(m.cost.d2h_pageable_gbps == doctest::Approx(h200_facts::kD2hPageableGbps).epsilon(0.10));
    CHECK(m.cost.d2h_pageable_gbps == h200_facts::kD2hPageablePresetGbps);
    CHECK(m.cost.staged_peer_gbps == h200_facts::kPeerWithoutP2pGbps);
    CHECK(m.cost.launch_us + m.cost.kernel_min_us == doctest::Approx(h200_facts::kLaunchPlusTinyKernelUs));
    CHECK(peer_pairs(m) == 0);
}

TEST_CASE("hgx-h200-8: eight H200 on NVSwitch, every ordered pair peers over 18 NVLinks")
{
    const MachineSpec m = load_machine("hgx-h200-8");
    REQUIRE(m.devices.size() == 8);
    const int buses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
    for (std::size_t a = 0; a < 8; ++a) {
        CAPTURE(a);
        check_is_measured_h200(m.devices[a]);
        CHECK(m.devices[a].pci_bus == buses[a]);
        for (std::size_t b = 0; b < 8; ++b) {
            if (a == b) continue;
            const LinkSpec& link = m.links[a][b];
            CHECK(link.type == LinkType::NVLink);
            CHECK(link.can_peer);
            CHECK(link.nvlinks == 18);
            CHECK(link.gbps >= h200_facts::kNvlinkP2pLowGbps);
            CHECK(link.gbps <= h200_facts::kNvlinkP2pHighGbps);
            CHECK(link.perf_rank == 0);
            CHECK(link.native_atomics);
            CHECK(link_label(link) == "NV18");
        }
    }
    CHECK(peer_pairs(m) == 8 * 7);
    CHECK(pci_bus_id(m.devices[4]) == "0000:9A:00.0");
}

TEST_CASE("pcie-4: four L4 boards on PCIe, no pair can peer")
{
    const MachineSpec m = load_machine("pcie-4");
    REQUIRE(m.devices.size() == 4);
    for (const auto& d : m.devices) {
        // deviceQuery on an NVIDIA L4 (CUDA 12.0 driver).
        CHECK(d.name == "NVIDIA L4");
        CHECK(d.total_mem == 23612293120ull);
        CHECK(d.sm_count == 58);
        CHECK(d.major == 8);
        CHECK(d.minor == 9);
        CHECK(d.memory_bus_width == 192);
        CHECK(d.l2_cache_size == 50331648);
        CHECK(d.max_threads_per_sm == 1536);
        CHECK(d.async_engine_count == 2);
    }
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            if (a != b) CHECK(m.links[a][b].type == LinkType::PCIe);
    CHECK(peer_pairs(m) == 0);
    // Peer copies are staged through the host: slower than a pinned host copy over the same bus.
    CHECK(m.cost.staged_peer_gbps > 0);
    CHECK(m.cost.staged_peer_gbps <= m.cost.h2d_pinned_gbps);
}

TEST_CASE("islands-2x2: peers within 0-1 and 2-3, none across")
{
    const MachineSpec m = load_machine("islands-2x2");
    REQUIRE(m.devices.size() == 4);
    auto island = [](std::size_t d) { return d / 2; };
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b) {
            if (a == b) continue;
            CAPTURE(a);
            CAPTURE(b);
            const bool same_island = island(a) == island(b);
            CHECK(m.links[a][b].can_peer == same_island);
            CHECK(m.links[a][b].type == (same_island ? LinkType::NVLink : LinkType::PCIe));
        }
    CHECK(peer_pairs(m) == 4);
}

TEST_CASE("mixed-3: three boards that differ in memory, compute capability and SM count")
{
    const MachineSpec m = load_machine("mixed-3");
    REQUIRE(m.devices.size() == 3);
    for (std::size_t a = 0; a < 3; ++a)
        for (std::size_t b = a + 1; b < 3; ++b) {
            CAPTURE(a);
            CAPTURE(b);
            const DeviceSpec &x = m.devices[a], &y = m.devices[b];
            CHECK(x.total_mem != y.total_mem);
            CHECK(x.sm_count != y.sm_count);
            CHECK(x.major * 10 + x.minor != y.major * 10 + y.minor);
            CHECK(x.name != y.name);
        }
    check_is_measured_h200(m.devices[0]);
    // deviceQuery on an A100-SXM4-80GB (CUDA 12.5 driver).
    CHECK(m.devices[1].name == "NVIDIA A100-SXM4-80GB");
    CHECK(m.devices[1].total_mem == 85100068864ull);
    CHECK(m.devices[1].sm_count == 108);
    CHECK(m.devices[1].major == 8);
    CHECK(m.devices[1].minor == 0);
    CHECK(m.devices[1].l2_cache_size == 41943040);
    CHECK(m.devices[1].memory_bus_width == 5120);
    CHECK(m.devices[2].name == "NVIDIA L4");
    CHECK(peer_pairs(m) == 0);
}

TEST_CASE("other boards' kernel speeds follow their datasheet DRAM bandwidth")
{
    // A100 80GB: 1593 MHz x 2 x 5120 bits = 2039 GB/s; H200: 3201 MHz x 2 x 6016 bits = 4814 GB/s.
    const double ratio = (1593.0 * 2 * 5120 / 8) / (3201.0 * 2 * 6016 / 8);
    const DeviceSpec a100 = device_preset("a100-sxm4-80gb");
    CHECK(a100.memory_bandwidth_gbps == doctest::Approx(h200_facts::kMemoryBoundKernelGbps * ratio));
    CHECK(a100.d2d_copy_gbps == doctest::Approx(h200_facts::kD2dCopyGbps * ratio));
}

TEST_CASE("none: no driver and no devices")
{
    const MachineSpec m = load_machine("none");
    CHECK_FALSE(m.has_driver);
    CHECK(m.devices.empty());
    CHECK(m.links.empty());
}

TEST_CASE("an unknown name that is not a file lists the presets and suggests the nearest")
{
    try {
        load_machine("hgx-h200");
        FAIL("expected a TopologyError");
    } catch (const TopologyError& e) {
        const std::string message = e.what();
        CHECK(message.find("unknown topology \"hgx-h200\"") != std::string::npos);
        CHECK(message.find("did you mean \"hgx-h200-8\"?") != std::string::npos);
        for (const auto& name : preset_names()) CHECK(message.find(name) != std::string::npos);
    }
    try {
        load_machine("quantum");
        FAIL("expected a TopologyError");
    } catch (const TopologyError& e) {
        const std::string message = e.what();
        CHECK(message.find("did you mean") == std::string::npos);
        CHECK(message.find("islands-2x2") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(device_preset("h100"), doctest::Contains("did you mean \"h200\"?"), TopologyError);
}
