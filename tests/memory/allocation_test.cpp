// Placement of device allocations: alignment, capacity, reuse, lookup.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "memory/memory.h"

namespace mem = mgpu::sim::mem;

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST_CASE("device allocations are 256-byte aligned, disjoint and owned by their device") {
    mem::reset({64 * MiB, 64 * MiB});
    const std::vector<std::size_t> sizes = {1, 3, 255, 256, 257, 1000, 4097, 65536};
    struct Placed {
        std::uintptr_t base;
        std::size_t size;
    };
    std::vector<Placed> placed;
    for (int device = 0; device < 2; ++device) {
        for (std::size_t size : sizes) {
            void* p = mem::device_alloc(device, size, {});
            REQUIRE(p != nullptr);
            CHECK(address(p) % 256 == 0);
            CHECK(mem::device_of(p) == device);
            CHECK(mem::device_of(static_cast<char*>(p) + size - 1) == device);
            placed.push_back({address(p), size});
        }
    }
    for (std::size_t i = 0; i < placed.size(); ++i) {
        for (std::size_t j = i + 1; j < placed.size(); ++j) {
            const bool apart = placed[i].base + placed[i].size <= placed[j].base ||
                               placed[j].base + placed[j].size <= placed[i].base;
            CHECK(apart);
        }
    }
    int on_the_stack = 0;
    CHECK(mem::device_of(&on_the_stack) == -1);
    CHECK(mem::device_of(nullptr) == -1);
    CHECK(mem::live_allocations(0) == sizes.size());
    CHECK(mem::bytes_in_use(1) == 1 + 3 + 255 + 256 + 257 + 1000 + 4097 + 65536);
}

TEST_CASE("a device refuses what exceeds its capacity") {
    mem::reset({1 * MiB});
    CHECK(mem::device_alloc(0, 2 * MiB, {}) == nullptr);
    CHECK(mem::device_alloc(0, 1 * MiB + 1, {}) == nullptr);
    void* whole = mem::device_alloc(0, 1 * MiB, {});
    REQUIRE(whole != nullptr);
    CHECK(mem::bytes_in_use(0) == 1 * MiB);
    CHECK(mem::device_alloc(0, 1, {}) == nullptr);
    CHECK(mem::device_alloc(1, 1, {}) == nullptr);    // no such device
    CHECK(mem::device_alloc(-1, 1, {}) == nullptr);
    CHECK(mem::device_alloc(0, SIZE_MAX, {}) == nullptr);
    CHECK(mem::device_free(whole));
    CHECK(mem::bytes_in_use(0) == 0);
    CHECK(mem::device_alloc(0, 1 * MiB, {}) != nullptr);
}

TEST_CASE("freed blocks are reused and merge with free neighbours") {
    mem::reset({1 * MiB});
    void* quarter[4];
    for (void*& q : quarter) {
        q = mem::device_alloc(0, 256 * KiB, {});
        REQUIRE(q != nullptr);
    }
    CHECK(mem::device_alloc(0, 1, {}) == nullptr);

    SUBCASE("freed in address order") {
        CHECK(mem::device_free(quarter[1]));
        CHECK(mem::device_free(quarter[2]));
    }
    SUBCASE("freed in reverse order") {
        CHECK(mem::device_free(quarter[2]));
        CHECK(mem::device_free(quarter[1]));
    }
    // Only the merged middle half can hold this.
    void* half = mem::device_alloc(0, 512 * KiB, {});
    CHECK(half == quarter[1]);
    CHECK(mem::device_free(half));

    CHECK(mem::device_free(quarter[0]));
    CHECK(mem::device_free(quarter[3]));
    CHECK(mem::live_allocations(0) == 0);
    void* all = mem::device_alloc(0, 1 * MiB, {});
    CHECK(all == quarter[0]);
}

TEST_CASE("device_free accepts only the base of a live allocation") {
    mem::reset({4 * MiB});
    void* p = mem::device_alloc(0, 1000, {});
    REQUIRE(p != nullptr);
    CHECK_FALSE(mem::device_free(static_cast<char*>(p) + 8));
    CHECK_FALSE(mem::device_free(nullptr));
    int host = 0;
    CHECK_FALSE(mem::device_free(&host));
    CHECK(mem::device_free(p));
    CHECK_FALSE(mem::device_free(p));
}

TEST_CASE("find_device finds the allocation around an interior pointer") {
    mem::reset({4 * MiB, 4 * MiB});
    const mgpu::sim::Site first_site{"vector_add.cu", 17};
    char* a = static_cast<char*>(mem::device_alloc(1, 300, first_site));
    char* b = static_cast<char*>(mem::device_alloc(1, 512, {"vector_add.cu", 18}));
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);

    const auto inside = mem::find_device(a + 299);
    REQUIRE(inside.has_value());
    CHECK(inside->base == address(a));
    CHECK(inside->size == 300);
    CHECK(inside->device == 1);
    CHECK(inside->serial == 1);
    CHECK(std::strcmp(inside->site.file, "vector_add.cu") == 0);
    CHECK(inside->site.line == 17);

    CHECK_FALSE(mem::find_device(a + 300).has_value());   // padding up to the next 256 bytes
    const auto second = mem::find_device(b + 511);
    REQUIRE(second.has_value());
    CHECK(second->serial == 2);
    CHECK_FALSE(mem::find_device(b + 512).has_value());
    CHECK_FALSE(mem::find_device(a - 1).has_value());

    mem::device_free(a);
    CHECK_FALSE(mem::find_device(a).has_value());
    CHECK(mem::device_of(a) == 1);   // the range still belongs to the device
}

TEST_CASE("allocations are listed by serial, and reset starts over") {
    mem::reset({4 * MiB, 4 * MiB});
    void* first = mem::device_alloc(1, 10, {});
    void* second = mem::device_alloc(0, 10, {});
    void* third = mem::device_alloc(1, 10, {});
    mem::device_free(second);
    const auto live = mem::allocations();
    REQUIRE(live.size() == 2);
    CHECK(live[0].base == address(first));
    CHECK(live[0].serial == 1);
    CHECK(live[1].base == address(third));
    CHECK(live[1].serial == 3);

    mem::reset({4 * MiB});
    CHECK(mem::allocations().empty());
    CHECK(mem::live_allocations(1) == 0);
    void* again = mem::device_alloc(0, 10, {});
    REQUIRE(again != nullptr);
    CHECK(mem::find_device(again)->serial == 1);
}

TEST_CASE("zero-byte allocations get addresses of their own") {
    mem::reset({4 * MiB});
    void* a = mem::device_alloc(0, 0, {});
    void* b = mem::device_alloc(0, 0, {});
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a != b);
    CHECK(mem::find_device(a).has_value());
    CHECK(mem::device_free(a));
    CHECK(mem::device_free(b));
}
