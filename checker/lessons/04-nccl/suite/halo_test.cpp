// Criterion "halo exchange" (lesson section 4.6): exchange_halos fills each rank's halos with its
// neighbours' edge elements on a periodic ring, for one, two, three and more ranks, with sends and
// receives grouped on each rank's stream. A deadlock fails the case with the ranks' diagnosis.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"

namespace {

using namespace lesson4;

float own_value(std::size_t rank, std::size_t k) { return static_cast<float>(rank * 100000 + k + 1); }

void check_halos(const std::vector<Rank>& ranks, std::size_t interior, std::size_t halo) {
    const std::size_t n = ranks.size();
    const std::size_t width = interior + 2 * halo;
    PerRank<float> slabs(ranks, width);
    for (std::size_t r = 0; r < n; ++r) {
        std::vector<float> values(width, -1.0f);
        for (std::size_t k = 0; k < interior; ++k) values[halo + k] = own_value(r, k);
        slabs.upload(r, values);
    }
    suite::StudentCalls calls;
    const std::string what = "exchange_halos over " + suite::counted(n, "rank") + ", interior " +
                             std::to_string(interior) + ", halo " + std::to_string(halo);
    const ncclResult_t result = calls.watch(what, [&] { return exchange_halos(ranks, slabs.pointers(), interior, halo); });
    drain(ranks);
    require_result(result, ncclSuccess, what, calls);
    const auto rank_pointers = slabs.pointers();
    std::vector<const void*> pointers(rank_pointers.begin(), rank_pointers.end());
    if (!expect_grouped_on_rank_streams(calls, ranks, pointers, what)) return;
    for (std::size_t r = 0; r < n; ++r) {
        const std::vector<float> out = slabs.download(r);
        const std::size_t left = (r + n - 1) % n, right = (r + 1) % n;
        for (std::size_t k = 0; k < width; ++k) {
            float want = 0;
            std::string meaning;
            if (k < halo) {
                want = own_value(left, interior - halo + k);
                meaning = "its left halo: own element " + std::to_string(interior - halo + k) + " of rank " +
                          std::to_string(left) + ", its left neighbour";
            } else if (k < halo + interior) {
                want = own_value(r, k - halo);
                meaning = "its own element " + std::to_string(k - halo) + ", unchanged";
            } else {
                want = own_value(right, k - halo - interior);
                meaning = "its right halo: own element " + std::to_string(k - halo - interior) + " of rank " +
                          std::to_string(right) + ", its right neighbour";
            }
            if (out[k] != want) {
                std::string seen = std::to_string(out[k]);
                if (out[k] == -1.0f) seen += " (never written)";
                else if (out[k] > 0) {
                    const std::size_t from = static_cast<std::size_t>(out[k] - 1) / 100000;
                    const std::size_t element = static_cast<std::size_t>(out[k] - 1) % 100000;
                    seen += " (own element " + std::to_string(element) + " of rank " + std::to_string(from) + ")";
                }
                suite::expect_value(false, what + ": rank " + std::to_string(r) + "'s slab [" + std::to_string(k) + "]",
                                      std::to_string(want) + ", " + meaning, seen);
                return;
            }
        }
    }
}

}  // namespace

TEST_CASE("halo exchange: four ranks of pcie-4") {
    if (!start({"pcie-4"}, "4 ranks, 1000 own elements, halo 3")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_halos(ranks, 1000, 3);
    close_suite_ranks(ranks);
}

TEST_CASE("halo exchange: two ranks, where both neighbours are the same rank") {
    if (!start({"islands-2x2", "lazy"}, "ranks on devices 1 and 2, 517 own elements, halo 5")) return;
    std::vector<Rank> ranks = suite_ranks({1, 2});
    check_halos(ranks, 517, 5);
    close_suite_ranks(ranks);
}

TEST_CASE("halo exchange: one rank, its own neighbour on both sides") {
    if (!start({"h200"}, "1 rank, 64 own elements, halo 2")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_halos(ranks, 64, 2);
    close_suite_ranks(ranks);
}

TEST_CASE("halo exchange: three ranks of mixed-3 and eight of hgx-h200-8 under shuffled schedules") {
    if (!start({"hgx-h200-8", "shuffle:9"}, "8 ranks, halo as wide as the interior, then ranks on 3 devices")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_halos(ranks, 7, 7);
    close_suite_ranks(ranks);
    std::vector<Rank> three = suite_ranks({5, 0, 6});
    check_halos(three, 20011, 1);
    close_suite_ranks(three);
}
