// Collectives and send/receive give what NCCL's documentation defines, for every datatype and
// operation, out of place and in place (docs: api/colls.rst, usage/inplace.rst, p2p.rst).
#include <doctest/doctest.h>

#include "nccl_test_support.h"

using namespace nccl_tests;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 1001;   // odd, so no element count lines up with anything

struct RankData {
    std::vector<double> values;
    std::vector<unsigned char> bytes;
};

std::vector<RankData> make_inputs(int n, ncclDataType_t type, ncclRedOp_t op, std::size_t count, std::uint32_t seed) {
    std::vector<RankData> inputs(n);
    for (int r = 0; r < n; ++r) {
        inputs[r].values = operand_values(type, op, n, count, seed + 17u * r);
        inputs[r].bytes = encode(type, inputs[r].values);
    }
    return inputs;
}

// Elements where `actual` differs from `expected`.
int mismatches(const std::vector<unsigned char>& actual, ncclDataType_t type, const std::vector<double>& expected) {
    int wrong = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
        if (get(actual, type, i) != expected[i]) ++wrong;
    return wrong;
}

int all_reduce_mismatches(int n, ncclDataType_t type, ncclRedOp_t op, bool in_place) {
    Comms comms(n);
    const std::size_t bytes = kCount * size_of(type);
    const auto inputs = make_inputs(n, type, op, kCount, 1000u + type * 10u + op);
    std::vector<DeviceBuffer> send, recv;
    for (int r = 0; r < n; ++r) {
        send.emplace_back(r, bytes);
        recv.emplace_back(r, bytes);
        send[r].upload(inputs[r].bytes);
        recv[r].fill(0x5a);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        void* target = in_place ? send[r].get() : recv[r].get();
        REQUIRE(ncclAllReduce(send[r].get(), target, kCount, type, op, comms[r], nullptr) == ncclSuccess);
    }
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    std::vector<double> expected(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
        std::vector<double> column;
        for (int r = 0; r < n; ++r) column.push_back(inputs[r].values[i]);
        expected[i] = reduce_reference(type, op, column);
    }
    int wrong = 0;
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        wrong += mismatches((in_place ? send[r] : recv[r]).download(bytes), type, expected);
    }
    cudaSetDevice(0);
    return wrong;
}

}  // namespace

TEST_CASE("all-reduce gives every rank the exact result for every datatype and built-in operation") {
    use_machine("hgx-h200-8");
    for (ncclDataType_t type : kAllTypes) {
        for (ncclRedOp_t op : kBuiltinOps) {
            // ncclAvg on floats multiplies by 1/n first: with n a power of two and small integers
            // every step is exact in half, bfloat16, float and double; the 8-bit formats round.
            if (op == ncclAvg && (type == ncclFloat8e4m3 || type == ncclFloat8e5m2)) continue;
            const int n = op == ncclAvg ? 4 : 3;
            CAPTURE(type);
            CAPTURE(op);
            CHECK(all_reduce_mismatches(n, type, op, false) == 0);
            CHECK(all_reduce_mismatches(n, type, op, true) == 0);
        }
    }
}

TEST_CASE("ncclAvg on integers sums and then divides, truncating toward zero") {
    use_machine("hgx-h200-8");
    Comms comms(3);
    // Per element: the inputs of ranks 0, 1, 2. Premultiplying by 1/3 in integers would give 0
    // for the first; dividing by 3 with rounding down would give -3 for the second.
    const std::vector<std::vector<std::int32_t>> inputs = {{5, -7, 4}, {5, 0, 4}, {5, 0, 3}};
    const std::vector<std::int32_t> expected = {5, -7 / 3, 11 / 3};
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < 3; ++r) {
        buffers.emplace_back(r, 3 * sizeof(std::int32_t));
        std::vector<unsigned char> bytes(3 * sizeof(std::int32_t));
        std::memcpy(bytes.data(), inputs[r].data(), bytes.size());
        buffers[r].upload(bytes);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 3; ++r)
        REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), 3, ncclInt32, ncclAvg, comms[r], nullptr) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < 3; ++r) {
        const auto bytes = buffers[r].download(3 * sizeof(std::int32_t));
        std::vector<std::int32_t> got(3);
        std::memcpy(got.data(), bytes.data(), bytes.size());
        CHECK(got == expected);
    }
}

TEST_CASE("ncclAvg on floats with three ranks is within rounding of the mean") {
    use_machine("hgx-h200-8");
    Comms comms(3);
    const std::vector<float> per_rank = {1.0f, 2.0f, 4.0f};
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < 3; ++r) {
        buffers.emplace_back(r, sizeof(float));
        std::vector<unsigned char> bytes(sizeof(float));
        std::memcpy(bytes.data(), &per_rank[r], sizeof(float));
        buffers[r].upload(bytes);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 3; ++r)
        REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), 1, ncclFloat32, ncclAvg, comms[r], nullptr) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < 3; ++r) {
        float got = 0;
        const auto bytes = buffers[r].download(sizeof(float));
        std::memcpy(&got, bytes.data(), sizeof got);
        CHECK(got == doctest::Approx(7.0 / 3.0).epsilon(1e-6));
    }
}

TEST_CASE("broadcast, reduce, all-gather and reduce-scatter place the right elements on the right ranks") {
    use_machine("hgx-h200-8");
    const int n = 4;
    Comms comms(n);
    const ncclDataType_t type = ncclInt32;
    const std::size_t count = 37;
    const std::size_t bytes = count * size_of(type);
    const auto inputs = make_inputs(n, type, ncclSum, count * n, 77u);
    for (bool in_place : {false, true}) {
        CAPTURE(in_place);
        for (int root : {0, 2}) {
            CAPTURE(root);
            std::vector<DeviceBuffer> send, recv;
            for (int r = 0; r < n; ++r) {
                send.emplace_back(r, bytes * n);
                recv.emplace_back(r, bytes * n);
                send[r].upload(inputs[r].bytes);
                recv[r].fill(0x77);
            }
            auto target = [&](int r) { return in_place ? send[r].get() : recv[r].get(); };
            auto result = [&](int r, std::size_t length, std::size_t offset = 0) {
                return (in_place ? send[r] : recv[r]).download(length, offset);
            };

            // Broadcast: every rank gets the root's first `count` elements.
            REQUIRE(ncclGroupStart() == ncclSuccess);
            for (int r = 0; r < n; ++r)
                REQUIRE(ncclBroadcast(send[r].get(), target(r), count, type, root, comms[r], nullptr) == ncclSuccess);
            REQUIRE(ncclGroupEnd() == ncclSuccess);
            const std::vector<double> root_values(inputs[root].values.begin(), inputs[root].values.begin() + count);
            for (int r = 0; r < n; ++r) CHECK(mismatches(result(r, bytes), type, root_values) == 0);

            // Reduce: the root gets the sum of everyone's first `count` elements (fresh inputs).
            for (int r = 0; r < n; ++r) send[r].upload(inputs[r].bytes);
            REQUIRE(ncclGroupStart() == ncclSuccess);
            for (int r = 0; r < n; ++r)
                REQUIRE(ncclReduce(send[r].get(), target(r), count, type, ncclSum, root, comms[r], nullptr) ==
                        ncclSuccess);
            REQUIRE(ncclGroupEnd() == ncclSuccess);
            std::vector<double> sums(count, 0.0);
            for (std::size_t i = 0; i < count; ++i)
                for (int r = 0; r < n; ++r) sums[i] += inputs[r].values[i];
            CHECK(mismatches(result(root, bytes), type, sums) == 0);
        }

        // All-gather: rank r's block r is its own input; in place, the input is already there.
        std::vector<DeviceBuffer> send, recv;
        for (int r = 0; r < n; ++r) {
            send.emplace_back(r, bytes * n);
            recv.emplace_back(r, bytes * n);
            recv[r].fill(0x33);
            std::vector<unsigned char> own(inputs[r].bytes.begin(), inputs[r].bytes.begin() + bytes);
            if (in_place) recv[r].upload(own, r * bytes);
            else send[r].upload(own);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            const void* source = in_place ? static_cast<const void*>(recv[r].bytes_at(r * bytes)) : send[r].get();
            REQUIRE(ncclAllGather(source, recv[r].get(), count, type, comms[r], nullptr) == ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        std::vector<double> gathered;
        for (int k = 0; k < n; ++k)
            gathered.insert(gathered.end(), inputs[k].values.begin(), inputs[k].values.begin() + count);
        for (int r = 0; r < n; ++r) CHECK(mismatches(recv[r].download(bytes * n), type, gathered) == 0);

        // Reduce-scatter: rank r gets block r of the element-wise sum; in place, it lands in block r.
        for (int r = 0; r < n; ++r) send[r].upload(inputs[r].bytes);
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            void* destination = in_place ? static_cast<void*>(send[r].bytes_at(r * bytes)) : recv[r].get();
            REQUIRE(ncclReduceScatter(send[r].get(), destination, count, type, ncclSum, comms[r], nullptr) ==
                    ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            std::vector<double> block(count, 0.0);
            for (std::size_t i = 0; i < count; ++i)
                for (int k = 0; k < n; ++k) block[i] += inputs[k].values[r * count + i];
            const auto got = in_place ? send[r].download(bytes, r * bytes) : recv[r].download(bytes);
            CHECK(mismatches(got, type, block) == 0);
        }
    }
}

TEST_CASE("all-to-all built from grouped sends and receives matches ncclAlltoAll and the definition") {
    use_machine("hgx-h200-8");
    const int n = 5;
    Comms comms(n);
    const ncclDataType_t type = ncclFloat64;
    const std::size_t count = 9;
    const std::size_t bytes = count * size_of(type);
    const auto inputs = make_inputs(n, type, ncclSum, count * n, 5u);
    std::vector<DeviceBuffer> send, by_p2p, by_collective;
    for (int r = 0; r < n; ++r) {
        send.emplace_back(r, bytes * n);
        by_p2p.emplace_back(r, bytes * n);
        by_collective.emplace_back(r, bytes * n);
        send[r].upload(inputs[r].bytes);
        by_p2p[r].fill(0x11);
        by_collective[r].fill(0x22);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        for (int peer = 0; peer < n; ++peer) {
            REQUIRE(ncclSend(send[r].bytes_at(peer * bytes), count, type, peer, comms[r], nullptr) == ncclSuccess);
            REQUIRE(ncclRecv(by_p2p[r].bytes_at(peer * bytes), count, type, peer, comms[r], nullptr) == ncclSuccess);
        }
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclAlltoAll(send[r].get(), by_collective[r].get(), count, type, comms[r], nullptr) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        CAPTURE(r);
        // Block k of rank r's result is block r of rank k's input.
        std::vector<double> expected;
        for (int k = 0; k < n; ++k)
            expected.insert(expected.end(), inputs[k].values.begin() + r * count,
                            inputs[k].values.begin() + (r + 1) * count);
        CHECK(mismatches(by_p2p[r].download(bytes * n), type, expected) == 0);
        CHECK(mismatches(by_collective[r].download(bytes * n), type, expected) == 0);
    }
}

TEST_CASE("a periodic halo exchange with send and receive works for one, two and several ranks") {
    use_machine("hgx-h200-8");
    for (int n : {1, 2, 5}) {
        CAPTURE(n);
        Comms comms(n);
        const ncclDataType_t type = ncclUint32;
        const std::size_t count = 16;
        const std::size_t bytes = count * size_of(type);
        std::vector<RankData> own = make_inputs(n, type, ncclSum, count, 900u);
        std::vector<DeviceBuffer> mine, from_left, from_right;
        for (int r = 0; r < n; ++r) {
            mine.emplace_back(r, bytes);
            from_left.emplace_back(r, bytes);
            from_right.emplace_back(r, bytes);
            mine[r].upload(own[r].bytes);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            const int left = (r + n - 1) % n, right = (r + 1) % n;
            REQUIRE(ncclRecv(from_left[r].get(), count, type, left, comms[r], nullptr) == ncclSuccess);
            REQUIRE(ncclSend(mine[r].get(), count, type, right, comms[r], nullptr) == ncclSuccess);
            REQUIRE(ncclRecv(from_right[r].get(), count, type, right, comms[r], nullptr) == ncclSuccess);
            REQUIRE(ncclSend(mine[r].get(), count, type, left, comms[r], nullptr) == ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            const int left = (r + n - 1) % n, right = (r + 1) % n;
            CHECK(mismatches(from_left[r].download(bytes), type, own[left].values) == 0);
            CHECK(mismatches(from_right[r].download(bytes), type, own[right].values) == 0);
        }
    }
}

TEST_CASE("a pre-multiplied sum scales each input by a host or a device scalar before summing") {
    use_machine("hgx-h200-8");
    const int n = 4;
    Comms comms(n);
    const std::size_t count = 100;
    const auto inputs = make_inputs(n, ncclFloat32, ncclSum, count, 31u);
    for (ncclScalarResidence_t residence : {ncclScalarHostImmediate, ncclScalarDevice}) {
        CAPTURE(residence);
        std::vector<DeviceBuffer> buffers, scalars;
        std::vector<ncclRedOp_t> ops(n);
        const float factor = 0.5f;
        for (int r = 0; r < n; ++r) {
            buffers.emplace_back(r, count * sizeof(float));
            buffers[r].upload(inputs[r].bytes);
            scalars.emplace_back(r, sizeof(float));
            std::vector<unsigned char> bytes(sizeof(float));
            std::memcpy(bytes.data(), &factor, sizeof factor);
            scalars[r].upload(bytes);
            float host_factor = factor;
            void* scalar = residence == ncclScalarDevice ? scalars[r].get() : static_cast<void*>(&host_factor);
            REQUIRE(ncclRedOpCreatePreMulSum(&ops[r], scalar, ncclFloat32, residence, comms[r]) == ncclSuccess);
            CHECK(ops[r] >= ncclNumOps);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r)
            REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), count, ncclFloat32, ops[r], comms[r], nullptr) ==
                    ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        std::vector<double> expected(count, 0.0);
        for (std::size_t i = 0; i < count; ++i)
            for (int r = 0; r < n; ++r) expected[i] += inputs[r].values[i] * factor;
        for (int r = 0; r < n; ++r) CHECK(mismatches(buffers[r].download(count * sizeof(float)), ncclFloat32, expected) == 0);
        for (int r = 0; r < n; ++r) CHECK(ncclRedOpDestroy(ops[r], comms[r]) == ncclSuccess);
        CHECK(ncclRedOpDestroy(ops[0], comms[0]) == ncclInvalidArgument);
    }
}

TEST_CASE("a collective of zero elements succeeds and touches nothing") {
    use_machine("hgx-h200-8");
    Comms comms(2);
    DeviceBuffer a(0, 16), b(1, 16);
    a.fill(0x42);
    b.fill(0x42);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a.get(), a.get(), 0, ncclFloat32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(ncclAllReduce(b.get(), b.get(), 0, ncclFloat32, ncclSum, comms[1], nullptr) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    CHECK(a.download(16) == std::vector<unsigned char>(16, 0x42));
    CHECK(b.download(16) == std::vector<unsigned char>(16, 0x42));
}
