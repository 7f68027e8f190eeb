#include "api_call.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "host_function.h"
#include "host_order.h"
#include "program_clock.h"
#include "scheduler.h"
#include "trace_export.h"

namespace mgpu::sim::rt {

std::string hex_pointer(const void* pointer) {
    if (pointer == nullptr) return "nullptr";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%p", pointer);
    return buffer;
}

std::string where(const Site& site) {
    if (site.file == nullptr || *site.file == '\0') return "an unknown place";
    return std::string(site.file) + ":" + std::to_string(site.line);
}

ApiCall::ApiCall(const char* name, Site site, HostCost cost) : lock_(runtime().mutex, std::defer_lock), site_(site) {
    program_clock_enter();   // the real time from here to the call's end is the simulator's, not the program's
    if (!inside_host_function()) lock_.lock();
    ensure_up();
    Runtime& r = runtime();
    generation_ = r.generation;
    mgpu::trace::ApiCall call;
    call.seq = r.next_api_seq++;
    call.host_thread = host_thread_id();
    call.name = name;
    call.device = device_count() > 0 ? current_device() : -1;
    call.file = site.file ? site.file : "";
    call.line = site.line;
    double& clock = host_clock();
    // A join, a lock or a barrier since the thread's last call ordered it after another thread.
    clock = std::max(clock, host_order_floor_us());
    call.begin_us = clock;
    begin_us_ = clock;
    const CostModel& model = r.machine.cost;
    switch (cost) {
    case HostCost::Api: clock += model.api_us; break;
    case HostCost::Launch: clock += model.launch_us; break;
    case HostCost::Sync: clock += model.sync_us; break;
    case HostCost::Copy: clock += model.copy_call_us; break;
    case HostCost::MemsetPage: clock += model.memset_call_us; break;
    case HostCost::MemsetKernel: clock += model.memset_launch_us; break;
    }
    index_ = r.trace.calls.size();
    r.trace.calls.push_back(std::move(call));
    // The host raised a flag a held kernel polls before this call, not later.
    if (!r.held_kernels.empty()) release_held_kernels(begin_us_);
}

ApiCall::~ApiCall() {
    if (!finished_) finish(cudaSuccess, false);
    const double clock = host_clock();
    host_order_note_clock(clock);
    // The lock goes before the call ends: the program's own locking begins after it.
    if (lock_.owns_lock()) lock_.unlock();
    program_clock_leave(clock);
}

mgpu::trace::ApiCall& ApiCall::record() {
    static mgpu::trace::ApiCall discarded;
    Runtime& r = runtime();
    // A reset or clear_trace during the call (control code called from inside) drops the record.
    if (r.generation != generation_ || index_ >= r.trace.calls.size()) return discarded = {};
    return r.trace.calls[index_];
}

ApiCall& ApiCall::arg_named(const char* name, long long value, const char* shown) {
    record().args.push_back(value);
    if (!shown_args_.empty()) shown_args_ += ", ";
    shown_args_ += name;
    shown_args_ += '=';
    shown_args_ += shown;
    return *this;
}

ApiCall& ApiCall::arg(const char* name, long long value) {
    return arg_named(name, value, std::to_string(value).c_str());
}

ApiCall& ApiCall::arg(const char* name, const void* pointer) {
    return arg_named(name, static_cast<long long>(reinterpret_cast<std::uintptr_t>(pointer)),
                     hex_pointer(pointer).c_str());
}

ApiCall& ApiCall::arg_stream(const char* name, cudaStream_t stream, bool per_thread_default) {
    const std::uint64_t id = stream_trace_id(stream, per_thread_default);
    record().stream = id;
    std::string shown;
    if (id == mgpu::trace::kLegacyStream)
        shown = stream == nullptr ? "0" : "cudaStreamLegacy";
    else if (id == mgpu::trace::kPerThreadStream)
        shown = stream == nullptr ? "0 (per-thread)" : "cudaStreamPerThread";
    else
        shown = "stream#" + std::to_string(id);
    return arg_named(name, static_cast<long long>(id), shown.c_str());
}

ApiCall& ApiCall::on_stream(cudaStream_t stream, bool per_thread_default) {
    record().stream = stream_trace_id(stream, per_thread_default);
    return *this;
}

ApiCall& ApiCall::arg_event(const char* name, cudaEvent_t event) {
    CUevent_st* found = find_event(event);
    const long long id = found ? static_cast<long long>(found->trace_id)
                               : static_cast<long long>(reinterpret_cast<std::uintptr_t>(event));
    std::string shown = found ? "event#" + std::to_string(id) : hex_pointer(event);
    return arg_named(name, id, shown.c_str());
}

void ApiCall::set_text(std::string text) {
    record().text = std::move(text);
    custom_text_ = true;
}

void ApiCall::crash(const std::string& explanation) {
    finished_ = true;
    mgpu::trace::ApiCall& call = record();
    call.result = -1;
    call.end_us = host_clock();
    call.text = call.name + "(" + shown_args_ + ")";
    std::fputs(explanation.c_str(), stderr);
    std::fflush(stderr);
    export_trace_now_if_asked();
    std::abort();
}

void ApiCall::set_output(std::string shown) { shown_output_ = std::move(shown); }

std::string ApiCall::where_called() {
    const mgpu::trace::ApiCall& call = record();
    return call.name + (call.file.empty() ? "" : " at " + call.file + ":" + std::to_string(call.line));
}

void ApiCall::wait_until(double end_us) {
    if (end_us >= kNeverUs && runtime().on_wait_forever) runtime().on_wait_forever(where_called());
    double& clock = host_clock();
    clock = std::max(clock, end_us);
}

void ApiCall::finish(cudaError_t result, bool store_error) {
    finished_ = true;
    mgpu::trace::ApiCall& call = record();
    call.result = result;
    call.end_us = host_clock();
    if (!custom_text_) call.text = call.name + "(" + shown_args_ + ")";
    if (!shown_output_.empty() && result == cudaSuccess) call.text += " -> " + shown_output_;
    if (store_error && result != cudaSuccess) last_error() = result;
}

void ApiCall::set_reason(std::string reason) { record().reason = std::move(reason); }

cudaError_t ApiCall::done(cudaError_t result) {
    finish(result, true);
    return result;
}

cudaError_t ApiCall::done_without_error(cudaError_t result) {
    finish(result, false);
    return result;
}

cudaError_t ApiCall::done_query(cudaError_t result) {
    finish(result, result != cudaErrorNotReady);
    return result;
}

}  // namespace mgpu::sim::rt
