// Page-locked host memory: blocks the runtime allocates and ranges the program registers.
#include <doctest/doctest.h>

#include <unistd.h>

#include <vector>

#include "memory/memory.h"

namespace mem = mgpu::sim::mem;

TEST_CASE("host_alloc gives page-aligned blocks that find_host knows") {
    mem::reset({1 << 20});
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    char* p = static_cast<char*>(mem::host_alloc(1000, 3));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % page == 0);
    p[0] = 1;
    p[999] = 2;   // writable host memory
    const auto found = mem::find_host(p + 999);
    REQUIRE(found.has_value());
    CHECK(found->base == reinterpret_cast<std::uintptr_t>(p));
    CHECK(found->size == 1000);
    CHECK(found->allocated_by_runtime);
    CHECK(found->flags == 3);
    CHECK_FALSE(mem::find_host(p + 1000).has_value());
    CHECK_FALSE(mem::find_host(p - 1).has_value());
    CHECK(mem::live_host_allocations() == 1);

    CHECK_FALSE(mem::host_register(p + 10, 5, 0));      // already page-locked
    CHECK_FALSE(mem::host_unregister(p));               // allocated, not registered
    CHECK_FALSE(mem::host_free(p + 1));
    CHECK(mem::host_free(p));
    CHECK_FALSE(mem::host_free(p));
    CHECK(mem::live_host_allocations() == 0);
    CHECK_FALSE(mem::find_host(p).has_value());
}

TEST_CASE("registered ranges do not overlap and unregister by their base") {
    mem::reset({1 << 20});
    std::vector<char> buffer(10000);
    char* b = buffer.data();
    CHECK(mem::host_register(b + 1000, 4000, 1));
    CHECK_FALSE(mem::host_register(b + 4999, 10, 0));   // overlaps the last byte
    CHECK_FALSE(mem::host_register(b, 1001, 0));        // overlaps the first byte
    CHECK(mem::host_register(b, 1000, 0));              // ends exactly where the other begins
    CHECK(mem::host_register(b + 5000, 10, 0));         // begins exactly where it ends

    const auto found = mem::find_host(b + 4999);
    REQUIRE(found.has_value());
    CHECK(found->base == reinterpret_cast<std::uintptr_t>(b + 1000));
    CHECK(found->size == 4000);
    CHECK_FALSE(found->allocated_by_runtime);
    CHECK(found->flags == 1);
    CHECK(mem::live_host_allocations() == 0);            // registrations are not allocations

    CHECK_FALSE(mem::host_free(b + 1000));
    CHECK_FALSE(mem::host_unregister(b + 1001));
    CHECK(mem::host_unregister(b + 1000));
    CHECK_FALSE(mem::host_unregister(b + 1000));
    CHECK_FALSE(mem::find_host(b + 2000).has_value());
    CHECK(mem::host_unregister(b));
    CHECK(mem::host_unregister(b + 5000));
}

TEST_CASE("reset drops page-locked allocations and registrations") {
    mem::reset({1 << 20});
    std::vector<char> buffer(100);
    REQUIRE(mem::host_alloc(64, 0) != nullptr);
    REQUIRE(mem::host_register(buffer.data(), buffer.size(), 0));
    mem::reset({1 << 20});
    CHECK(mem::live_host_allocations() == 0);
    CHECK_FALSE(mem::find_host(buffer.data()).has_value());
    CHECK(mem::host_register(buffer.data(), buffer.size(), 0));
}
