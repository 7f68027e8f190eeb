// What every lesson 4 case stands on: the machine with NCCL's hang reports turned into findings,
// the suite's own communicators and buffers (never the student's open_ranks, so that a broken task 1
// costs only its criterion), and checks of how the student's NCCL calls were made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"
#include "support/student_calls.h"

namespace lesson4 {

// suite::start, plus: an NCCL hang or a wait that can never end fails the case with the
// simulator's diagnosis (ranks, devices, last calls) instead of ending the checker without a verdict.
// `nccl_fails_at` > 0 makes that NCCL operation fail on the GPU (MGPU_FAULTS ncclfail=N); such
// cases are skipped where faults cannot be injected.
bool start(const suite::Machine& machine, const std::string& inputs, int nccl_fails_at = 0);
// The same with the faults given (only the NCCL operation and the stream creation are taken).
bool start(const suite::Machine& machine, const std::string& inputs, const mgpu::sim::Faults& faults);

// Ranks over `devices` made by the suite (ncclCommInitAll and non-blocking streams); every device
// of the machine when `devices` is empty.
std::vector<Rank> suite_ranks(std::vector<int> devices = {});
void close_suite_ranks(std::vector<Rank>& ranks);
// The suite's own work on every rank's stream, still running when the student's function is called:
// an all-reduce of `count` floats in place, then a memset behind it. With a rank aborted (comm
// nullptr) the others cannot run a collective together, so they get only the memset.
void queue_reduce_then_memset(const std::vector<Rank>& ranks, const std::vector<float*>& buffers, std::size_t count);

// Waits for every rank's stream and device, whatever the student queued.
void drain(const std::vector<Rank>& ranks);

// `count` elements per rank on each rank's device, plus a guard zone after them.
template <class T>
class PerRank {
public:
    PerRank(const std::vector<Rank>& ranks, std::size_t count);
    ~PerRank();
    PerRank(const PerRank&) = delete;
    PerRank& operator=(const PerRank&) = delete;

    std::vector<T*> pointers() const { return pointers_; }
    std::size_t count() const { return count_; }
    void upload(std::size_t rank, const std::vector<T>& values);   // [0, count), guard zone filled
    std::vector<T> download(std::size_t rank) const;               // count + guard elements

private:
    std::vector<int> devices_;
    std::vector<T*> pointers_;
    std::size_t count_;
};

inline constexpr std::size_t kGuard = 32;
// What the guard zone of a rank's buffer holds: different on every rank, so that an operation that
// runs past the count changes it (an average of equal values would not).
template <class T>
T guard_value(std::size_t rank) { return static_cast<T>(-4242 - static_cast<int>(rank) * 17); }

// The trace id of a stream, as ApiCall::stream and DeviceOp::stream record it.
std::uint64_t stream_id(cudaStream_t stream);

// The student's NCCL operations (collectives, sends, receives) in one window: every one inside an
// ncclGroupStart/ncclGroupEnd pair of the same window, nothing waited for inside a group, every
// group closed, and each on the stream of its rank (found by the buffer it names). Reports the
// first broken rule with the call that broke it; returns whether all held.
bool expect_grouped_on_rank_streams(const suite::StudentCalls& calls, const std::vector<Rank>& ranks,
                                    const std::vector<const void*>& rank_buffers, const std::string& what);

// Every ncclGroupStart of the student's calls in `calls` has its ncclGroupEnd. Otherwise a finding
// that names the call that opened the group, and the suite closes what is left open.
bool expect_groups_closed(const suite::StudentCalls& calls, const std::string& what);

// "ncclInvalidArgument (4)".
std::string result_text(ncclResult_t result);

// The function returned `expected`; otherwise a finding that names the student's NCCL or CUDA call
// that failed last, and whether this looks like the skeleton's placeholder.
bool expect_result(ncclResult_t observed, ncclResult_t expected, const std::string& what,
                   const suite::StudentCalls& calls);
// The same, ending the case when it does not hold.
void require_result(ncclResult_t observed, ncclResult_t expected, const std::string& what,
                    const suite::StudentCalls& calls);

}  // namespace lesson4
