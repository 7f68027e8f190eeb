// One runtime API call as the trace records it. Constructing it takes the simulator's lock,
// brings the machine up if needed and starts the call on the calling thread's virtual clock;
// done() stores the result (and the last error, as the CUDA runtime does) and closes the record.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "mgpu/sim/site.h"
#include "mgpu/sim/types.h"
#include "runtime_state.h"

namespace mgpu::sim::rt {

// What the host spends in a call before it waits for anything: a plain call, a launch, a
// synchronising call, a copy, a memset of up to a page, a larger memset (a kernel launch).
enum class HostCost { Api, Launch, Sync, Copy, MemsetPage, MemsetKernel };

class ApiCall {
public:
    ApiCall(const char* name, Site site, HostCost cost = HostCost::Api);
    ApiCall(const ApiCall&) = delete;
    ApiCall& operator=(const ApiCall&) = delete;
    ~ApiCall();

    ApiCall& arg(const char* name, long long value);
    ApiCall& arg(const char* name, const void* pointer);
    ApiCall& arg_stream(const char* name, cudaStream_t stream, bool per_thread_default);
    // The stream a call without a stream argument queues its work on.
    ApiCall& on_stream(cudaStream_t stream, bool per_thread_default);
    ApiCall& arg_event(const char* name, cudaEvent_t event);
    // An argument shown as text (an enum by name) and recorded by value.
    ApiCall& arg_named(const char* name, long long value, const char* shown);
    void set_text(std::string text);
    // What an out-parameter received, shown after the call: "cudaMalloc(size=8) -> 0x7f...".
    void set_output(std::string shown);   // replaces the generated "name(a=1, b=2)" form
    // Why the call fails, in the library's words (NCCL's last error), kept with its record.
    void set_reason(std::string reason);

    double begin_us() const { return begin_us_; }
    const Site& site() const { return site_; }

    // The host is blocked until the modelled time `end_us` (a synchronising call).
    void wait_until(double end_us);

    // Finishes the record. Failing codes become the thread's last error.
    cudaError_t done(cudaError_t result);
    // As done(), but cudaErrorNotReady is an answer, not an error (queries).
    cudaError_t done_query(cudaError_t result);
    // Ends the process as the real runtime crashes here, after `explanation` on stderr. The
    // record keeps result -1 (the call never returned) and the trace file is still written.
    [[noreturn]] void crash(const std::string& explanation);
    // Records the result without touching the last error (cudaGetLastError reports it).
    cudaError_t done_without_error(cudaError_t result);

    // "cudaStreamSynchronize at main.cu:40": the call as a diagnosis names it.
    std::string where_called();

private:
    mgpu::trace::ApiCall& record();
    void finish(cudaError_t result, bool store_error);

    std::unique_lock<std::recursive_mutex> lock_;
    Site site_;
    std::size_t index_ = 0;
    std::uint64_t generation_ = 0;
    double begin_us_ = 0;
    std::string shown_args_;
    std::string shown_output_;
    bool custom_text_ = false;
    bool finished_ = false;
};

std::string hex_pointer(const void* pointer);
// "file.cu:12", or "an unknown place" when the call came without a site.
std::string where(const Site& site);

}  // namespace mgpu::sim::rt
