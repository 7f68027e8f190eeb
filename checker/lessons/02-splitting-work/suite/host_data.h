// One run of the student's multi-GPU functions on random data in page-locked host buffers that the
// suite owns, with what the checks need afterwards: the results, the trace window of the call, the
// live-object counters around it, and each share's own operations found on the timeline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "split_work.h"
#include "support/student_calls.h"

namespace lesson2 {

// The suite's own plans (never the student's, so that a wrong plan function costs only its criterion).
std::vector<Share> even_plan(std::size_t n, int parts);
std::vector<Share> weighted_plan(std::size_t n, const std::vector<double>& weights);
// Each device's memory bandwidth in GB/s, the speed of a memory-bound kernel: weights for a mixed machine.
std::vector<double> bandwidth_weights();
std::size_t plan_total(const std::vector<Share>& plan);
std::string plan_text(const std::vector<Share>& plan);   // "[3@0 3@3 2@6]"

enum class Driver { OneThread, Threads };

// One share's work as the trace shows it: the first call that copied its input in and the last that
// copied its output out (found by their host addresses, within the share's range of in and of out,
// or, for a share staged through a host buffer of the function's own, by their size and direction),
// and every operation on the streams its copies went to.
struct ShareWork {
    const mgpu::trace::ApiCall* copy_in = nullptr;
    const mgpu::trace::ApiCall* copy_out = nullptr;
    bool staged_in = false;    // copy_in reads a host buffer of the function's own, not in + first
    bool staged_out = false;   // copy_out writes one, not out + first
    std::vector<mgpu::trace::DeviceOp> ops;   // copies and kernels on the share's stream, no event records
    double start_us() const;
    double end_us() const;
};

struct Run {
    Driver driver = Driver::OneThread;
    std::vector<Share> plan;
    float factor = 1;
    int caller = 0;                     // the device current when the function was called
    int caller_thread = -1;             // the suite's host thread, as the trace numbers it
    std::vector<float> input;
    std::vector<float> output;          // the plan's elements, then the guard zone
    cudaError_t status = cudaSuccess;
    bool with_times = false;
    std::vector<float> device_ms;
    suite::StudentCalls calls;
    std::vector<mgpu::trace::ApiCall> window;   // calls.calls(), kept so ShareWork can point into it
    std::vector<ShareWork> shares;              // one per plan entry, empty for an empty share
    // Counters right before and right after the call (after its work drained).
    std::vector<std::size_t> bytes_before, bytes_after;
    std::size_t streams_before = 0, streams_after = 0, events_before = 0, events_after = 0;
    std::size_t pinned_before = 0, pinned_after = 0;

    std::string text() const;           // "scale_on_devices(out, in, factor, plan [..], &device_ms)"
};

// Calls scale_on_devices (with device_ms when `with_times`) or scale_with_threads with device
// `caller` current, on random inputs. Fails and stops the case when the call does not return
// cudaSuccess: what the case checks needs a run that worked.
void run(Run& result, Driver driver, const std::vector<Share>& plan, std::uint64_t salt, int caller,
         bool with_times = false);
// The same without that stop: for cases that judge what the call left behind, which a call that
// failed half-way must release as well.
void run_any_status(Run& result, Driver driver, const std::vector<Share>& plan, std::uint64_t salt, int caller,
                    bool with_times = false);

// A plan with more shares than the machine has devices (5 on pcie-4): the call must refuse it. The
// refusal's code is the results criterion's business, so any status is taken; a call that made no
// CUDA call at all (a placeholder) has shown nothing to judge, and the case stops unless it returned
// cudaErrorInvalidValue.
void run_refused(Run& result, Driver driver, std::uint64_t salt, int caller);

// Brings the machine up again with the Nth cudaMalloc from then on failing with
// cudaErrorMemoryAllocation, as on a full device. False (the case is then skipped and must return)
// where faults cannot be injected: on real GPUs.
bool inject_malloc_failure(int nth);

// The same call with the student's own host buffers from allocate_host_buffer (results not read).
void run_with_student_buffers(Run& result, const std::vector<Share>& plan, int caller);

// Every element is factor * in and the guard zone after the plan is untouched. When not, says why
// first where the timeline shows it (a share's result copied back after the function returned, or
// never copied back to out + first).
bool expect_results(const Run& result);

}  // namespace lesson2
