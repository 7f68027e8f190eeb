// Atomic functions: results as the CUDA C++ Programming Guide defines them, over many threads
// and blocks. Expected values are worked out on the host from the Guide's definitions.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "launch_recorder.h"

namespace {

constexpr unsigned kBlocks = 4, kThreads = 256, kTotal = kBlocks * kThreads;

struct Counters {
    int add_int = 0;
    unsigned add_unsigned = 0;
    unsigned long long add_ull = 0;
    float add_float = 0.0f;
    double add_double = 0.0;
    int sub_int = 0;
    unsigned sub_unsigned = 1u << 20;
    int min_int = 1 << 30;
    int max_int = -(1 << 30);
    unsigned long long max_ull = 0;
    long long min_ll = 0;
    unsigned or_bits = 0;
    unsigned and_bits = 0xffffffffu;
    unsigned long long xor_bits = 0;
    unsigned exchanged = 0;
    int cas_flag = 0;
};

__global__ void update_counters(Counters* c, int* cas_winners, unsigned* exchange_olds) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&c->add_int, 2);
    atomicAdd(&c->add_unsigned, 3u);
    atomicAdd(&c->add_ull, 1ull << 33);
    atomicAdd(&c->add_float, 0.5f);
    atomicAdd(&c->add_double, 0.25 * i);
    atomicSub(&c->sub_int, 1);
    atomicSub(&c->sub_unsigned, 2u);
    atomicMin(&c->min_int, static_cast<int>(i) - 100);
    atomicMax(&c->max_int, static_cast<int>(i) * 3);
    atomicMax(&c->max_ull, static_cast<unsigned long long>(i) << 40);
    atomicMin(&c->min_ll, -static_cast<long long>(i) * 1000000000ll);
    atomicOr(&c->or_bits, 1u << (i % 32));
    atomicAnd(&c->and_bits, ~(1u << (i % 32)));
    atomicXor(&c->xor_bits, 1ull << (i % 64));
    exchange_olds[i] = atomicExch(&c->exchanged, i + 1);
    if (atomicCAS(&c->cas_flag, 0, static_cast<int>(i) + 1) == 0) atomicAdd(cas_winners, 1);
}

__global__ void count_with_inc(unsigned* counter, unsigned limit, unsigned* olds) {
    olds[threadIdx.x] = atomicInc(counter, limit);
}

__global__ void count_with_dec(unsigned* counter, unsigned limit, unsigned* olds) {
    olds[threadIdx.x] = atomicDec(counter, limit);
}

}  // namespace

TEST_CASE("atomic add, sub, min, max, and, or, xor, exch and CAS over 1024 threads") {
    Counters c;
    int cas_winners = 0;
    std::vector<unsigned> exchange_olds(kTotal, 12345);
    update_counters<<<kBlocks, kThreads>>>(&c, &cas_winners, exchange_olds.data());
    REQUIRE_FALSE(kernel_test::last_fault());

    double sum_of_quarters = 0;
    for (unsigned i = 0; i < kTotal; ++i) sum_of_quarters += 0.25 * i;
    CHECK(c.add_int == 2 * static_cast<int>(kTotal));
    CHECK(c.add_unsigned == 3 * kTotal);
    CHECK(c.add_ull == static_cast<unsigned long long>(kTotal) << 33);
    CHECK(c.add_float == 0.5f * kTotal);
    CHECK(c.add_double == sum_of_quarters);
    CHECK(c.sub_int == -static_cast<int>(kTotal));
    CHECK(c.sub_unsigned == (1u << 20) - 2 * kTotal);
    CHECK(c.min_int == -100);
    CHECK(c.max_int == 3 * static_cast<int>(kTotal - 1));
    CHECK(c.max_ull == static_cast<unsigned long long>(kTotal - 1) << 40);
    CHECK(c.min_ll == -static_cast<long long>(kTotal - 1) * 1000000000ll);
    CHECK(c.or_bits == 0xffffffffu);
    CHECK(c.and_bits == 0u);
    CHECK(c.xor_bits == 0ull);   // every bit flipped 1024 / 64 = 16 times

    // Exactly one thread found the flag at 0, and the flag holds its number.
    CHECK(cas_winners == 1);
    CHECK(c.cas_flag >= 1);
    CHECK(c.cas_flag <= static_cast<int>(kTotal));

    // Each atomicExch returned the value stored by exactly one other exchange (or the initial 0),
    // and the last value stored is the one left in memory.
    std::vector<unsigned> olds = exchange_olds;
    olds.push_back(c.exchanged);
    std::sort(olds.begin(), olds.end());
    for (unsigned k = 0; k <= kTotal; ++k) CHECK(olds[k] == k);
}

TEST_CASE("atomicInc wraps to 0 after the limit, atomicDec wraps to the limit after 0") {
    const unsigned threads = 100, limit = 9;
    unsigned counter = 0;
    std::vector<unsigned> olds(threads);
    count_with_inc<<<1, threads>>>(&counter, limit, olds.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    // ((old >= limit) ? 0 : old + 1), applied 100 times from 0, visits 0..9 ten times each.
    CHECK(counter == threads % (limit + 1));
    std::sort(olds.begin(), olds.end());
    for (unsigned k = 0; k < threads; ++k) CHECK(olds[k] == k / 10);

    const unsigned dec_limit = 4;
    counter = 2;
    std::vector<unsigned> dec_olds(threads);
    count_with_dec<<<1, threads>>>(&counter, dec_limit, dec_olds.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    // (((old == 0) || (old > limit)) ? limit : old - 1): 2, 1, 0, 4, 3, 2, 1, 0, 4, ...
    unsigned expected = 2;
    for (unsigned k = 0; k < threads; ++k) expected = (expected == 0 || expected > dec_limit) ? dec_limit : expected - 1;
    CHECK(counter == expected);
}
