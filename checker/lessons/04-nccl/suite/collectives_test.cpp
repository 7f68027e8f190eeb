// Criterion "collective results" (lesson section 4.4): average_in_place and broadcast_from_root give
// the average and the root's values on every rank, one call per rank on its stream, all in one group
// with nothing waited for inside it. The ranks are the suite's own.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"
#include "mgpu/check/harness.h"

namespace {

using namespace lesson4;

std::mt19937_64 generator(std::uint64_t salt) { return std::mt19937_64(mgpu::check::run_seed() ^ (salt * 0x9E3779B97F4A7C15ULL)); }

std::string float_text(float value) { return std::to_string(value); }

void check_average(const std::vector<Rank>& ranks, std::size_t count, std::uint64_t salt) {
    const std::size_t n = ranks.size();
    PerRank<float> buffers(ranks, count);
    // Integers in floats: sums are exact, so the only difference from the exact average is the
    // rounding of ncclAvg, which multiplies each value by 1/n before adding.
    std::vector<std::vector<float>> inputs(n, std::vector<float>(count));
    auto random = generator(salt);
    std::uniform_int_distribution<int> value(-1000, 1000);
    for (std::size_t r = 0; r < n; ++r) {
        for (float& x : inputs[r]) x = static_cast<float>(value(random));
        buffers.upload(r, inputs[r]);
    }
    suite::StudentCalls calls;
    const std::string what = "average_in_place over " + suite::counted(n, "rank") + ", count " + std::to_string(count);
    const ncclResult_t result = calls.watch(what, [&] { return average_in_place(ranks, buffers.pointers(), count); });
    drain(ranks);
    require_result(result, ncclSuccess, what, calls);
    const auto rank_pointers = buffers.pointers();
    std::vector<const void*> pointers(rank_pointers.begin(), rank_pointers.end());
    if (!expect_grouped_on_rank_streams(calls, ranks, pointers, what)) return;
    std::vector<double> sums(count, 0.0);
    for (std::size_t q = 0; q < n; ++q)
        for (std::size_t i = 0; i < count; ++i) sums[i] += inputs[q][i];
    for (std::size_t r = 0; r < n; ++r) {
        const std::vector<float> out = buffers.download(r);
        for (std::size_t i = 0; i < count; ++i) {
            const double sum = sums[i];
            const double want = sum / static_cast<double>(n);
            // n roundings of a value up to 1000 in float, each within half a unit in the last place.
            const double tolerance = 1e-6 * 1000.0 * static_cast<double>(n + 1);
            if (!(std::fabs(out[i] - want) <= tolerance)) {
                suite::expect_value(false, what + ": every element is the average over the ranks",
                                      "rank " + std::to_string(r) + " [" + std::to_string(i) + "] = " +
                                          std::to_string(want) + " (the sum " + std::to_string(sum) + " / " +
                                          std::to_string(n) + ")",
                                      float_text(out[i]) + (std::fabs(out[i] - sum) <= tolerance
                                                                ? ": the sum, not the average (use ncclAvg)"
                                                                : std::string()));
                return;
            }
        }
        for (std::size_t i = count; i < out.size(); ++i)
            if (out[i] != guard_value<float>(r)) {
                suite::expect_value(false, what + ": nothing is written past the count", "untouched",
                                      "rank " + std::to_string(r) + " [" + std::to_string(i) + "] = " +
                                          float_text(out[i]) + ": the count is in elements, not bytes");
                return;
            }
    }
}

void check_broadcast(const std::vector<Rank>& ranks, std::size_t count, int root, std::uint64_t salt) {
    const std::size_t n = ranks.size();
    PerRank<int> buffers(ranks, count);
    auto random = generator(salt);
    std::vector<int> sent(count);
    for (int& x : sent) x = static_cast<int>(random() % 2000001) - 1000000;
    // Every other rank starts with a value of its own, so that values broadcast from the wrong rank
    // say which rank that was.
    const auto filler = [](std::size_t rank) { return -7 - static_cast<int>(rank); };
    for (std::size_t r = 0; r < n; ++r)
        buffers.upload(r, static_cast<int>(r) == root ? sent : std::vector<int>(count, filler(r)));
    suite::StudentCalls calls;
    const std::string what = "broadcast_from_root over " + suite::counted(n, "rank") + " from rank " +
                             std::to_string(root) + ", count " + std::to_string(count);
    const ncclResult_t result =
        calls.watch(what, [&] { return broadcast_from_root(ranks, buffers.pointers(), count, root); });
    drain(ranks);
    require_result(result, ncclSuccess, what, calls);
    const auto rank_pointers = buffers.pointers();
    std::vector<const void*> pointers(rank_pointers.begin(), rank_pointers.end());
    if (!expect_grouped_on_rank_streams(calls, ranks, pointers, what)) return;
    for (std::size_t r = 0; r < n; ++r) {
        const std::vector<int> out = buffers.download(r);
        for (std::size_t i = count; i < out.size(); ++i)
            if (out[i] != guard_value<int>(r)) {
                suite::expect_value(false, what + ": nothing is written past the count", "untouched",
                                      "rank " + std::to_string(r) + " [" + std::to_string(i) + "] = " +
                                          std::to_string(out[i]) + ": the count is in elements, not bytes");
                return;
            }
        for (std::size_t i = 0; i < count; ++i)
            if (out[i] != sent[i]) {
                std::string seen = std::to_string(out[i]);
                for (std::size_t k = 0; k < n; ++k) {
                    if (static_cast<int>(k) == root || out[i] != filler(k)) continue;
                    if (k == r) seen += " (never written)";
                    else if (static_cast<int>(k) == ranks[static_cast<std::size_t>(root)].device)
                        seen += " (rank " + std::to_string(k) + "'s value: rank " + std::to_string(root) +
                                " is on device " + std::to_string(k) + ", and ncclBroadcast's root is a rank, "
                                "not a device id)";
                    else seen += " (rank " + std::to_string(k) + "'s value: broadcast from rank " +
                                 std::to_string(k) + ", not from rank " + std::to_string(root) + ")";
                }
                suite::expect_value(false, what + ": every rank holds the root's values",
                                      "rank " + std::to_string(r) + " [" + std::to_string(i) + "] = " +
                                          std::to_string(sent[i]) + " (rank " + std::to_string(root) + "'s)",
                                      seen);
                return;
            }
    }
}

}  // namespace

TEST_CASE("collective results: average over the eight GPUs of hgx-h200-8, an odd count") {
    if (!start({"hgx-h200-8"}, "8 ranks, 100003 floats")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_average(ranks, 100003, 1);
    close_suite_ranks(ranks);
}

TEST_CASE("collective results: average on one GPU, counts 1 and 0") {
    if (!start({"h200"}, "1 rank, 1 and 0 floats")) return;
    std::vector<Rank> one = suite_ranks();
    check_average(one, 1, 2);
    check_average(one, 0, 3);
    close_suite_ranks(one);
}

TEST_CASE("collective results: average over pcie-4 under a lazy schedule, 64 MiB in all") {
    if (!start({"pcie-4", "lazy"}, "4 ranks, 4194304 floats (16 MiB) each")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_average(ranks, std::size_t{1} << 22, 4);
    close_suite_ranks(ranks);
}

TEST_CASE("collective results: average over three ranks of islands-2x2 under a shuffled schedule") {
    if (!start({"islands-2x2", "shuffle:7"}, "ranks on devices 3, 0, 2; 4099 floats")) return;
    std::vector<Rank> ranks = suite_ranks({3, 0, 2});
    check_average(ranks, 4099, 5);
    close_suite_ranks(ranks);
}

// No rank sits on the device of its own number: a root given as ranks[root].device picks another rank.
TEST_CASE("collective results: broadcast from every root of islands-2x2, rank i not on device i") {
    if (!start({"islands-2x2", "shuffle:3"}, "4 ranks on devices 2, 3, 0, 1; 1031 ints, roots 0 to 3")) return;
    std::vector<Rank> ranks = suite_ranks({2, 3, 0, 1});
    for (int root = 0; root < 4; ++root) check_broadcast(ranks, 1031, root, 10 + static_cast<std::uint64_t>(root));
    close_suite_ranks(ranks);
}

TEST_CASE("collective results: broadcast on hgx-h200-8 from rank 5, and on one GPU") {
    if (!start({"hgx-h200-8", "lazy"}, "8 ranks, 65537 ints from rank 5")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_broadcast(ranks, 65537, 5, 20);
    check_broadcast(ranks, 1, 0, 21);
    close_suite_ranks(ranks);
}

TEST_CASE("collective results: a root outside the ranks is refused") {
    if (!start({"pcie-4"}, "4 ranks, roots 4 and -1")) return;
    std::vector<Rank> ranks = suite_ranks();
    PerRank<int> buffers(ranks, 16);
    for (int root : {4, -1}) {
        suite::StudentCalls calls;
        const std::string what = "broadcast_from_root with root " + std::to_string(root) + " of 4 ranks";
        const ncclResult_t result = calls.watch(what, [&] { return broadcast_from_root(ranks, buffers.pointers(), 16, root); });
        if (!expect_result(result, ncclInvalidArgument, what, calls) || !expect_groups_closed(calls, what)) break;
    }
    close_suite_ranks(ranks);
}

// NCCL cancels a group in which a call was refused: the outermost ncclGroupEnd queues nothing and
// returns the refusal. Rank 2 has no communicator, as after an abort (task 6).
TEST_CASE("collective results: an all-reduce refused on one rank is returned, and the group is closed") {
    if (!start({"pcie-4"}, "4 ranks, rank 2's comm nullptr; 257 floats")) return;
    std::vector<Rank> ranks = suite_ranks();
    std::vector<Rank> broken = ranks;
    broken[2].comm = nullptr;
    PerRank<float> buffers(ranks, 257);
    for (std::size_t r = 0; r < ranks.size(); ++r) buffers.upload(r, std::vector<float>(257, 10.0f * static_cast<float>(r + 1)));
    suite::StudentCalls calls;
    const std::string what = "average_in_place over 4 ranks whose rank 2 has comm == nullptr";
    const ncclResult_t result = calls.watch(what, [&] { return average_in_place(broken, buffers.pointers(), 257); });
    const bool closed = expect_groups_closed(calls, what);
    drain(ranks);
    if (closed && expect_result(result, ncclInvalidArgument, what, calls)) {
        for (std::size_t r = 0; r < ranks.size(); ++r) {
            const std::vector<float> out = buffers.download(r);
            const float before = 10.0f * static_cast<float>(r + 1);
            if (out[0] != before) {
                // A kernel launched between ncclGroupStart and ncclGroupEnd is queued at its launch, so it
                // runs although the cancelled group queues no collective.
                const bool divided = out[0] == before / static_cast<float>(ranks.size());
                suite::expect_value(false, what + ": nothing of the failed group runs",
                                      "rank " + std::to_string(r) + " [0] = " + float_text(before),
                                      float_text(out[0]) +
                                          (divided ? " (divided by " + std::to_string(ranks.size()) +
                                                         " with no sum: a kernel launched inside the group runs even "
                                                         "when the group is cancelled; launch it after ncclGroupEnd, "
                                                         "section 4.5)"
                                                   : std::string()));
                break;
            }
        }
    }
    close_suite_ranks(ranks);
}
