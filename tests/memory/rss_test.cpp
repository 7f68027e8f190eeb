// Reserved device memory costs nothing until touched, and freed memory stops costing.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "memory/memory.h"

namespace mem = mgpu::sim::mem;

namespace {

constexpr std::size_t MiB = 1024 * 1024;

std::size_t resident_bytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;   // reported in kB
    }
    return 0;
}

}  // namespace

TEST_CASE("only touched device memory is resident, and freeing gives it back") {
    const std::size_t h200_bytes = 150'000'000'000;
    mem::reset(std::vector<std::size_t>(4, h200_bytes));
    const std::size_t before = resident_bytes();
    REQUIRE(before > 0);

    constexpr std::size_t kPerDevice = 256 * MiB;
    std::vector<void*> blocks;
    for (int device = 0; device < 4; ++device) {
        void* p = mem::device_alloc(device, kPerDevice, {});
        REQUIRE(p != nullptr);
        blocks.push_back(p);
    }
    CHECK(resident_bytes() - before < 16 * MiB);   // allocating alone touches nothing

    REQUIRE(mem::run_guarded(mem::kAllDevices, [&] {
        for (void* p : blocks) std::memset(p, 0x5a, kPerDevice);
    }, nullptr));
    const std::size_t touched = 4 * kPerDevice;
    const std::size_t grown = resident_bytes() - before;
    CHECK(grown >= touched * 9 / 10);
    CHECK(grown < touched * 3 / 2);

    for (void* p : blocks) CHECK(mem::device_free(p));
    const std::size_t left = resident_bytes() - before;
    CHECK(left < touched / 10);
}
