// An NCCL operation that fails on the GPU (MGPU_FAULTS ncclfail=N, as when a peer dies): it never
// finishes and moves nothing, every rank reports ncclRemoteError as its asynchronous error, and
// ncclCommAbort ends it so that the streams drain. A host thread that would wait behind it, or
// polls its stream forever, is stopped with a diagnosis, as a hang on GPUs would never end.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "child_process.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"
#include "nccl_test_support.h"

using namespace nccl_tests;

namespace {

memory_tests::ChildOutcome run_in_child(const std::function<void()>& body) {
    std::fflush(stdout);
    return memory_tests::run_in_child(body);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Job {
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<float*> buffers;
};

// n ranks; each stream gets an all-reduce of 4096 floats and then a memset behind it.
Job queue_job(int n, int failing) {
    mgpu::sim::Faults faults;
    faults.nccl_fails_at = failing;
    conformance::use_machine("hgx-h200-8", "eager", faults);
    Job job;
    job.comms.resize(n);
    REQUIRE(ncclCommInitAll(job.comms.data(), n, nullptr) == ncclSuccess);
    job.streams.resize(n);
    job.buffers.resize(n);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaStreamCreateWithFlags(&job.streams[r], cudaStreamNonBlocking);
        cudaMalloc(&job.buffers[r], 4096 * sizeof(float));
        const std::vector<float> ones(4096, 1.0f);
        cudaMemcpy(job.buffers[r], ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclAllReduce(job.buffers[r], job.buffers[r], 4096, ncclFloat, ncclSum, job.comms[r], job.streams[r]) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    return job;
}

}  // namespace

TEST_CASE("a failed operation never finishes, every rank reports ncclRemoteError, and abort ends it") {
    Job job = queue_job(3, 1);
    for (int r = 0; r < 3; ++r) {
        cudaSetDevice(r);
        cudaMemsetAsync(job.buffers[r], 0, 16, job.streams[r]);
    }
    for (int poll = 0; poll < 100; ++poll)
        for (int r = 0; r < 3; ++r) CHECK(cudaStreamQuery(job.streams[r]) == cudaErrorNotReady);
    for (int r = 0; r < 3; ++r) {
        ncclResult_t error = ncclSuccess;
        CHECK(ncclCommGetAsyncError(job.comms[r], &error) == ncclSuccess);
        CHECK(error == ncclRemoteError);
    }
    CHECK(mgpu::sim::live_nccl_comms() == 3);
    for (int r = 0; r < 3; ++r) CHECK(ncclCommAbort(job.comms[r]) == ncclSuccess);
    CHECK(mgpu::sim::aborted_nccl_comms() == 3);
    CHECK(mgpu::sim::live_nccl_comms() == 0);
    for (int r = 0; r < 3; ++r) {
        cudaSetDevice(r);
        CHECK(cudaStreamSynchronize(job.streams[r]) == cudaSuccess);
        // Nothing was reduced: the first bytes were zeroed by the memset, the rest still hold 1.
        float value = 0;
        cudaMemcpy(&value, job.buffers[r] + 100, sizeof value, cudaMemcpyDeviceToHost);
        CHECK(value == 1.0f);
    }
}

TEST_CASE("operations before the failing one complete normally") {
    Job job = queue_job(2, 2);
    for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        CHECK(cudaStreamSynchronize(job.streams[r]) == cudaSuccess);
        ncclResult_t error = ncclInProgress;
        CHECK(ncclCommGetAsyncError(job.comms[r], &error) == ncclSuccess);
        CHECK(error == ncclSuccess);
        float value = 0;
        cudaMemcpy(&value, job.buffers[r], sizeof value, cudaMemcpyDeviceToHost);
        CHECK(value == 2.0f);
    }
}

TEST_CASE("a synchronisation behind the failed operation is stopped with a diagnosis") {
    const auto outcome = run_in_child([] {
        Job job = queue_job(2, 1);
        cudaSetDevice(1);
        cudaStreamSynchronize(job.streams[1]);
    });
    CHECK(outcome.exit_code == 3);
    CHECK(contains(outcome.standard_error, "cudaStreamSynchronize"));
    CHECK(contains(outcome.standard_error, "never finishes"));
    CHECK(contains(outcome.standard_error, "ncclCommAbort"));
}

TEST_CASE("a loop that polls only the stream behind the failed operation is stopped with a diagnosis") {
    const auto outcome = run_in_child([] {
        Job job = queue_job(2, 1);
        while (cudaStreamQuery(job.streams[0]) == cudaErrorNotReady) {
        }
    });
    CHECK(outcome.exit_code == 3);
    CHECK(contains(outcome.standard_error, "keeps polling cudaStreamQuery"));
    CHECK(contains(outcome.standard_error, "ncclCommGetAsyncError"));
}
