// Group semantics (NCCL docs groups.rst; a failed group: docs/nccl-group-errors.md): nothing inside a group is
// enqueued before the outermost ncclGroupEnd, nested groups launch once, a call refused inside
// a group is reported at its call and makes the outermost ncclGroupEnd return it and launch
// nothing (NCCL's group.cc), and one thread initialises several ranks inside a group.
#include <doctest/doctest.h>

#include <set>

#include "nccl_test_support.h"

using namespace nccl_tests;
using conformance::use_machine;

namespace {

std::size_t collective_ops() { return conformance::ops_of_kind(mgpu::trace::OpKind::Collective).size(); }

}  // namespace

TEST_CASE("nothing is enqueued before the outermost ncclGroupEnd, then every rank's part is") {
    for (const char* schedule : {"eager", "lazy", "shuffle:3"}) {
        CAPTURE(schedule);
        use_machine("hgx-h200-8", schedule);
        const int n = 4;
        Comms comms(n);
        std::vector<DeviceBuffer> buffers;
        for (int r = 0; r < n; ++r) {
            buffers.emplace_back(r, 64 * sizeof(float));
            buffers[r].upload(encode(ncclFloat32, std::vector<double>(64, r + 1.0)));
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        REQUIRE(ncclGroupStart() == ncclSuccess);   // nested: only the outer end launches
        for (int r = 0; r < n; ++r)
            REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), 64, ncclFloat32, ncclSum, comms[r], nullptr) ==
                    ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        CHECK(collective_ops() == 0);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        CHECK(collective_ops() == static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
            const auto bytes = buffers[r].download(64 * sizeof(float));
            CHECK(get(bytes, ncclFloat32, 0) == 10.0);
            CHECK(get(bytes, ncclFloat32, 63) == 10.0);
        }
    }
}

TEST_CASE("a call refused inside a group is reported at once, and the outermost ncclGroupEnd then launches nothing") {
    // NCCL's group is one atomic launch: ncclGroupEnd returns the first refused call's result and
    // cancels the rest of the group, whose calls had each returned ncclSuccess.
    use_machine("hgx-h200-8");
    Comms comms(2);
    DeviceBuffer a(0, 16), b(1, 16);
    a.upload(encode(ncclInt32, {1, 2, 3, 4}));
    b.upload(encode(ncclInt32, {10, 20, 30, 40}));
    REQUIRE(ncclGroupStart() == ncclSuccess);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a.get(), a.get(), 4, ncclInt32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(ncclAllReduce(b.get(), b.get(), 4, ncclInt32, static_cast<ncclRedOp_t>(99), comms[1], nullptr) ==
          ncclInvalidArgument);
    CHECK(ncclAllReduce(b.get(), b.get(), 4, ncclInt32, ncclSum, comms[1], nullptr) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);   // inner end: the error waits for the outermost one
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    CHECK(ncclGroupEnd() == ncclInvalidUsage);   // the failed end closed the group
    CHECK(collective_ops() == 0);
    for (auto [buffer, first] : {std::pair{&a, 1.0}, std::pair{&b, 10.0}})
        CHECK(get(buffer->download(16), ncclInt32, 0) == first);
    // A null communicator is refused the same way.
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a.get(), a.get(), 4, ncclInt32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(ncclAllReduce(b.get(), b.get(), 4, ncclInt32, ncclSum, nullptr, nullptr) == ncclInvalidArgument);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    CHECK(collective_ops() == 0);
    // The communicators are unharmed: the next group runs.
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a.get(), a.get(), 4, ncclInt32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(ncclAllReduce(b.get(), b.get(), 4, ncclInt32, ncclSum, comms[1], nullptr) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    const std::vector<double> sums = {11, 22, 33, 44};
    for (const DeviceBuffer* buffer : {&a, &b})
        for (std::size_t i = 0; i < 4; ++i) CHECK(get(buffer->download(16), ncclInt32, i) == sums[i]);
}

TEST_CASE("a group left open takes in every later call of its thread, which runs only at its ncclGroupEnd") {
    use_machine("hgx-h200-8");
    Comms comms(1);
    DeviceBuffer a(0, 16);
    a.upload(encode(ncclInt32, {1, 2, 3, 4}));
    DeviceBuffer b(0, 16);
    b.upload(encode(ncclInt32, {-5, -5, -5, -5}));
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(a.get(), b.get(), 4, ncclInt32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(collective_ops() == 0);
    CHECK(get(b.download(16), ncclInt32, 0) == -5.0);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(collective_ops() == 1);
    CHECK(get(b.download(16), ncclInt32, 0) == 1.0);
}

TEST_CASE("one thread initialises every rank inside a group, setting the device before each ncclCommInitRank") {
    use_machine("hgx-h200-8");
    const int n = 8;
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    std::vector<ncclComm_t> comms(n, nullptr);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(n - 1 - r);   // rank r on device n-1-r: ranks follow the call, devices the current one
        REQUIRE(ncclCommInitRank(&comms[r], n, id, r) == ncclSuccess);
    }
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        int rank = -1, count = -1, device = -1;
        CHECK(ncclCommUserRank(comms[r], &rank) == ncclSuccess);
        CHECK(ncclCommCount(comms[r], &count) == ncclSuccess);
        CHECK(ncclCommCuDevice(comms[r], &device) == ncclSuccess);
        CHECK(rank == r);
        CHECK(count == n);
        CHECK(device == n - 1 - r);
    }
    for (ncclComm_t comm : comms) CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("a communicator is initialised when ncclGroupEnd returns, not before") {
    use_machine("hgx-h200-8");
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    ncclComm_t comms[2] = {nullptr, nullptr};
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        REQUIRE(ncclCommInitRank(&comms[r], 2, id, r) == ncclSuccess);
    }
    DeviceBuffer buffer(0, 16);
    CHECK(ncclAllReduce(buffer.get(), buffer.get(), 4, ncclFloat32, ncclSum, comms[0], nullptr) == ncclInvalidUsage);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    ncclResult_t state = ncclInProgress;
    CHECK(ncclCommGetAsyncError(comms[0], &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    for (ncclComm_t comm : comms) CHECK(ncclCommDestroy(comm) == ncclSuccess);
    cudaSetDevice(0);
}

TEST_CASE("a non-blocking communicator reports ncclInProgress until every rank has joined") {
    use_machine("hgx-h200-8");
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comms[2] = {nullptr, nullptr};
    cudaSetDevice(0);
    CHECK(ncclCommInitRankConfig(&comms[0], 2, id, 0, &config) == ncclInProgress);
    ncclResult_t state = ncclSuccess;
    CHECK(ncclCommGetAsyncError(comms[0], &state) == ncclSuccess);
    CHECK(state == ncclInProgress);
    cudaSetDevice(1);
    const ncclResult_t last = ncclCommInitRankConfig(&comms[1], 2, id, 1, &config);
    CHECK((last == ncclSuccess || last == ncclInProgress));
    for (ncclComm_t comm : comms) {
        CHECK(ncclCommGetAsyncError(comm, &state) == ncclSuccess);
        CHECK(state == ncclSuccess);
    }
    for (ncclComm_t comm : comms) CHECK(ncclCommDestroy(comm) == ncclSuccess);
    cudaSetDevice(0);
}

TEST_CASE("the trace records every NCCL call with its arguments and every rank's part of the operation") {
    use_machine("hgx-h200-8");
    const int n = 3;
    Comms comms(n);
    std::vector<DeviceBuffer> buffers;
    std::vector<cudaStream_t> streams(n);
    for (int r = 0; r < n; ++r) {
        buffers.emplace_back(r, 40 * sizeof(double));
        cudaSetDevice(r);
        REQUIRE(cudaStreamCreate(&streams[r]) == cudaSuccess);
    }
    cudaSetDevice(0);
    mgpu::sim::clear_trace();
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclReduce(buffers[r].get(), buffers[r].get(), 40, ncclFloat64, ncclMax, 2, comms[r], streams[r]) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    const auto& trace = mgpu::sim::trace();
    const auto calls = trace.calls_named("ncclReduce");
    REQUIRE(calls.size() == static_cast<std::size_t>(n));
    CHECK(trace.calls_named("ncclGroupStart").size() == 1);
    CHECK(trace.calls_named("ncclGroupEnd").size() == 1);
    for (int r = 0; r < n; ++r) {
        const auto* call = calls[r];
        CAPTURE(call->text);
        CHECK(call->result == ncclSuccess);
        CHECK(call->text.find("count=40") != std::string::npos);
        CHECK(call->text.find("ncclFloat64") != std::string::npos);
        CHECK(call->text.find("ncclMax") != std::string::npos);
        CHECK(call->text.find("root=2") != std::string::npos);
        CHECK(call->text.find("rank " + std::to_string(r)) != std::string::npos);
    }
    const auto parts = trace.ops_of(mgpu::trace::OpKind::Collective);
    REQUIRE(parts.size() == static_cast<std::size_t>(n));
    std::set<int> devices;
    for (const auto* part : parts) {
        devices.insert(part->device);
        CHECK(part->bytes == 40 * sizeof(double));
        CHECK(part->end_us > part->start_us);
        CHECK(part->name.find("ncclReduce") == 0);
        // Each part is on its rank's stream and points back at its rank's call.
        bool matched = false;
        for (int r = 0; r < n; ++r)
            if (part->api_seq == calls[r]->seq) matched = part->device == r && part->stream == calls[r]->stream;
        CHECK(matched);
    }
    CHECK(devices.size() == static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaStreamDestroy(streams[r]);
    }
    cudaSetDevice(0);
}
