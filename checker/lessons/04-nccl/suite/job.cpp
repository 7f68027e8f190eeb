#include "job.h"

#include <cstdlib>
#include <map>

#include "support/expectations.h"
#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"

namespace lesson4 {

namespace {

#ifndef MGPU_CHECK_REAL_GPU
// The simulator stops a program whose ranks can never meet; here that is the student's code
// deadlocking inside the case, so the case fails with the whole diagnosis and the grade goes on.
[[noreturn]] void report_hang(const std::string& diagnosis) {
    std::string headline = diagnosis;
    const std::size_t newline = headline.find('\n');
    if (newline != std::string::npos) headline.resize(newline);
    const std::string prefix = "mgpu-sim: NCCL: ";
    if (headline.rfind(prefix, 0) == 0) headline.erase(0, prefix.size());
    mgpu::check::Finding finding;
    finding.check = "the ranks finish the operation instead of waiting for each other forever";
    finding.expected = "every NCCL call returns";
    finding.observed = headline + "\n" + diagnosis.substr(newline == std::string::npos ? diagnosis.size() : newline + 1);
    // A hang behind a failed operation is taught with the errors; any other with hangs.
    finding.section = diagnosis.find("section 4.7") != std::string::npos ? "4.7" : "4.10";
    // The place to look: the first line of the student's own file the diagnosis names (where a
    // thread waits, or a rank posted what nobody matched).
    std::size_t first = std::string::npos;
    for (const auto& [name, text] : mgpu::check::student_sources()) {
        for (std::size_t at = diagnosis.find(name + ":"); at != std::string::npos; at = diagnosis.find(name + ":", at + 1)) {
            const int line = std::atoi(diagnosis.c_str() + at + name.size() + 1);
            if (line <= 0 || at >= first) continue;
            first = at;
            finding.file = name;
            finding.line = line;
        }
    }
    mgpu::check::fail_and_end_process(finding);
}
#endif

void require_setup(bool ok, const std::string& what) {
    if (ok) return;
    mgpu::check::fail_and_stop({"the suite could set up the case (" + what + ")", "success", "a failure", "", 0, false, ""});
}

}  // namespace

bool start(const suite::Machine& machine, const std::string& inputs, int nccl_fails_at) {
    mgpu::sim::Faults faults;
    faults.nccl_fails_at = nccl_fails_at;
    return start(machine, inputs, faults);
}

bool start(const suite::Machine& machine, const std::string& inputs, const mgpu::sim::Faults& faults) {
    const bool injected = faults.nccl_fails_at > 0 || faults.stream_create_fails_at > 0;
    if (injected && suite::kOnRealGpu) {
        if (mgpu::check::skip_unless_topology(machine.topology)) return false;
        mgpu::check::skip("a failing NCCL operation or stream creation can be injected on the simulator only");
        return false;
    }
    if (!suite::start(machine, inputs)) return false;
#ifndef MGPU_CHECK_REAL_GPU
    if (injected) {
        mgpu::sim::Options options = mgpu::sim::options();
        options.faults.nccl_fails_at = faults.nccl_fails_at;
        options.faults.stream_create_fails_at = faults.stream_create_fails_at;
        mgpu::sim::reset_machine(options);
    }
    mgpu::sim::set_nccl_stop_handler(report_hang);
#endif
    return true;
}

std::vector<Rank> suite_ranks(std::vector<int> devices) {
    if (devices.empty())
        for (int device = 0; device < suite::device_count(); ++device) devices.push_back(device);
    std::vector<ncclComm_t> comms(devices.size());
    require_setup(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()) == ncclSuccess,
                  "ncclCommInitAll");
    std::vector<Rank> ranks(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        ranks[i].device = devices[i];
        ranks[i].comm = comms[i];
        require_setup(cudaSetDevice(devices[i]) == cudaSuccess &&
                          cudaStreamCreateWithFlags(&ranks[i].stream, cudaStreamNonBlocking) == cudaSuccess,
                      "a stream per rank");
    }
    cudaSetDevice(0);
    return ranks;
}

void close_suite_ranks(std::vector<Rank>& ranks) {
    for (Rank& rank : ranks) {
#ifndef MGPU_CHECK_REAL_GPU
        // An entry the student's code left behind may hold a stream it destroyed already (a finding
        // says so); destroying it again would crash the case in the grader's clean-up instead.
        if (rank.stream != nullptr && mgpu::sim::trace_id_of_stream(rank.stream) == 0) rank.stream = nullptr;
#endif
        cudaSetDevice(rank.device);
        if (rank.stream != nullptr) cudaStreamSynchronize(rank.stream);
        if (rank.comm != nullptr) ncclCommDestroy(rank.comm);
        if (rank.stream != nullptr) cudaStreamDestroy(rank.stream);
    }
    ranks.clear();
    cudaSetDevice(0);
}

void queue_reduce_then_memset(const std::vector<Rank>& ranks, const std::vector<float*>& buffers, std::size_t count) {
    bool all = true;
    for (const Rank& rank : ranks) all = all && rank.comm != nullptr;
    ncclGroupStart();
    for (std::size_t r = 0; r < ranks.size() && all; ++r)
        ncclAllReduce(buffers[r], buffers[r], count, ncclFloat, ncclSum, ranks[r].comm, ranks[r].stream);
    ncclGroupEnd();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        cudaSetDevice(ranks[r].device);
        cudaMemsetAsync(buffers[r], 0, count * sizeof(float), ranks[r].stream);
    }
    cudaSetDevice(0);
}

void drain(const std::vector<Rank>& ranks) {
    for (const Rank& rank : ranks) {
        cudaSetDevice(rank.device);
        cudaDeviceSynchronize();
    }
    cudaGetLastError();
    cudaSetDevice(0);
}

template <class T>
PerRank<T>::PerRank(const std::vector<Rank>& ranks, std::size_t count) : count_(count) {
    for (const Rank& rank : ranks) {
        devices_.push_back(rank.device);
        T* pointer = nullptr;
        require_setup(cudaSetDevice(rank.device) == cudaSuccess &&
                          cudaMalloc(&pointer, (count + kGuard) * sizeof(T)) == cudaSuccess,
                      "a buffer per rank");
        pointers_.push_back(pointer);
    }
    cudaSetDevice(0);
}

template <class T>
PerRank<T>::~PerRank() {
    for (std::size_t i = 0; i < pointers_.size(); ++i) {
        cudaSetDevice(devices_[i]);
        cudaFree(pointers_[i]);
    }
    cudaSetDevice(0);
}

template <class T>
void PerRank<T>::upload(std::size_t rank, const std::vector<T>& values) {
    std::vector<T> with_guard(values);
    with_guard.resize(count_ + kGuard, guard_value<T>(rank));
    require_setup(cudaSetDevice(devices_[rank]) == cudaSuccess &&
                      cudaMemcpy(pointers_[rank], with_guard.data(), with_guard.size() * sizeof(T),
                                 cudaMemcpyHostToDevice) == cudaSuccess,
                  "upload the inputs");
    cudaSetDevice(0);
}

template <class T>
std::vector<T> PerRank<T>::download(std::size_t rank) const {
    std::vector<T> values(count_ + kGuard);
    if (cudaSetDevice(devices_[rank]) != cudaSuccess ||
        cudaMemcpy(values.data(), pointers_[rank], values.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaGetLastError();
        mgpu::check::fail_and_stop({"the results can be read back", "cudaMemcpy to succeed",
                                    "it failed: the device faulted while running the code under test", "", 0, true, ""});
    }
    cudaSetDevice(0);
    return values;
}

template class PerRank<float>;
template class PerRank<int>;

std::uint64_t stream_id(cudaStream_t stream) {
#ifdef MGPU_CHECK_REAL_GPU
    unsigned long long id = 0;
    cudaStreamGetId(stream, &id);
    return id;
#else
    return mgpu::sim::trace_id_of_stream(stream);
#endif
}

bool expect_grouped_on_rank_streams(const suite::StudentCalls& calls, const std::vector<Rank>& ranks,
                                    const std::vector<const void*>& rank_buffers, const std::string& what) {
    static const std::map<std::string, int> operations = {
        {"ncclAllReduce", 1}, {"ncclBroadcast", 1}, {"ncclBcast", 0}, {"ncclReduce", 1}, {"ncclAllGather", 1},
        {"ncclReduceScatter", 1}, {"ncclSend", 0}, {"ncclRecv", 0}};
    static const char* waits[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                                  "cudaMemcpy", "cudaStreamQuery", "ncclCommFinalize", "ncclCommDestroy"};
    int depth = 0;
    const mgpu::trace::ApiCall* opened = nullptr;
    for (const auto& call : calls.calls()) {
        if (call.name == "ncclGroupStart") {
            if (depth++ == 0) opened = &call;
            continue;
        }
        if (call.name == "ncclGroupEnd") {
            if (depth > 0) --depth;
            continue;
        }
        for (const char* wait : waits) {
            if (depth > 0 && call.name == wait)
                return suite::expect(false, what + ": nothing waits inside a group",
                                       "no " + call.name + " between ncclGroupStart and ncclGroupEnd",
                                       call.text + " inside the group opened at " + suite::where(*opened), &call,
                                       "4.3");
        }
        auto op = operations.find(call.name);
        if (op == operations.end()) continue;
        if (depth == 0)
            return suite::expect(false, what + ": every NCCL operation is inside ncclGroupStart/ncclGroupEnd",
                                   call.name + " between ncclGroupStart() and ncclGroupEnd()",
                                   call.text + " outside any group: with one thread driving every rank, each rank's "
                                               "call waits for the others",
                                   &call, "4.3");
        // Which rank it belongs to: the rank whose buffer the send or receive pointer falls in (the
        // nearest buffer start at or below it).
        int rank = -1;
        std::uintptr_t nearest = 0;
        for (std::size_t a = 0; a < 2 && a < call.args.size(); ++a) {
            const auto address = static_cast<std::uintptr_t>(call.args[a]);
            for (std::size_t i = 0; i < rank_buffers.size(); ++i) {
                const auto base = reinterpret_cast<std::uintptr_t>(rank_buffers[i]);
                if (address >= base && (rank < 0 || base > nearest)) {
                    rank = static_cast<int>(i);
                    nearest = base;
                }
            }
            if (rank >= 0) break;
        }
        if (rank < 0) continue;
        const std::uint64_t wanted = stream_id(ranks[static_cast<std::size_t>(rank)].stream);
        if (call.stream != wanted)
            return suite::expect(false, what + ": each rank's operation goes to that rank's stream",
                                   call.name + " of rank " + std::to_string(rank) + " on stream#" +
                                       std::to_string(wanted) + " (ranks[" + std::to_string(rank) + "].stream)",
                                   call.text + " on " +
                                       (call.stream == mgpu::trace::kLegacyStream ? std::string("the legacy default stream")
                                                                                  : "stream#" + std::to_string(call.stream)),
                                   &call, "4.5");
    }
    return expect_groups_closed(calls, what);
}

bool expect_groups_closed(const suite::StudentCalls& calls, const std::string& what) {
    int depth = 0;
    const mgpu::trace::ApiCall* opened = nullptr;
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();   // `opened` points into it
    for (const auto& call : made) {
        if (call.name == "ncclGroupStart" && depth++ == 0) opened = &call;
        if (call.name == "ncclGroupEnd" && depth > 0) --depth;
    }
    if (depth == 0) return true;
    suite::expect(false, what + ": every group is closed, on the failure path too",
                    "an ncclGroupEnd for each ncclGroupStart before the function returns",
                    suite::counted(depth, "group") + " still open when the function returned: every later NCCL call "
                                            "of this thread would join it",
                    opened, "4.3");
    // The suite's own calls after this one must not join the student's group.
    for (; depth > 0; --depth) ncclGroupEnd();
    return false;
}

std::string result_text(ncclResult_t result) {
    static const char* names[] = {"ncclSuccess",     "ncclUnhandledCudaError", "ncclSystemError",
                                  "ncclInternalError", "ncclInvalidArgument",  "ncclInvalidUsage",
                                  "ncclRemoteError", "ncclInProgress"};
    const int code = static_cast<int>(result);
    const std::string name = code >= 0 && code < 8 ? names[code] : "ncclResult_t";
    return name + " (" + std::to_string(code) + ")";
}

namespace {

// What the student reads as the returned result, with the reason NCCL gave for it (what
// ncclGetLastError answers) when the call that failed with that code is known.
std::string observed_result(ncclResult_t observed, const suite::StudentCalls& calls,
                            const mgpu::trace::ApiCall* source) {
    std::string text = result_text(observed);
    bool any_nccl = false;
    for (const auto& call : calls.calls()) any_nccl = any_nccl || call.name.rfind("nccl", 0) == 0;
    if (observed == ncclInvalidUsage && !any_nccl)
        text += " without any NCCL call: is this still the skeleton's placeholder (its TODO not written yet)?";
    if (source != nullptr && source->result == static_cast<int>(observed) && !source->reason.empty())
        text += ", from " + source->name + ": \"" + source->reason + "\" (NCCL's reason, as ncclGetLastError gives it)";
    return text;
}

// The student's call the returned `code` most likely came from: the last that failed with it, else
// the last that failed at all. A failed ncclGroupEnd repeats the refusal of a call queued inside its
// group: that call is the one to name (its arguments and line are the mistake).
const mgpu::trace::ApiCall* failed_call(const suite::StudentCalls& calls, ncclResult_t code) {
    static mgpu::trace::ApiCall found;
    const auto& all = calls.calls();
    std::size_t at = all.size();
    bool same_code = false;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& call = all[i];
        if (call.result == 0 || call.name == "cudaStreamQuery" || call.name == "cudaEventQuery") continue;
        const bool same = call.result == static_cast<int>(code) && call.name.rfind("nccl", 0) == 0;
        if (same_code && !same) continue;
        at = i;
        same_code = same_code || same;
    }
    if (at == all.size()) return nullptr;
    if (same_code && all[at].name == "ncclGroupEnd") {
        std::size_t refused = at;
        int depth = 0;
        for (std::size_t i = at; i-- > 0;) {
            const auto& call = all[i];
            if (call.name == "ncclGroupEnd") ++depth;
            if (call.name == "ncclGroupStart" && depth-- == 0) break;
            if (call.result == static_cast<int>(code) && call.name.rfind("nccl", 0) == 0 && call.name != "ncclGroupEnd")
                refused = i;
        }
        at = refused;
    }
    found = all[at];
    return &found;
}

}  // namespace

bool expect_result(ncclResult_t observed, ncclResult_t expected, const std::string& what,
                   const suite::StudentCalls& calls) {
    if (observed == expected) return true;
    return suite::expect(false, what + " returns " + result_text(expected), result_text(expected),
                           observed_result(observed, calls, observed == ncclSuccess ? nullptr : failed_call(calls, observed)),
                           observed == ncclSuccess ? nullptr : failed_call(calls, observed));
}

void require_result(ncclResult_t observed, ncclResult_t expected, const std::string& what,
                    const suite::StudentCalls& calls) {
    if (observed == expected) return;
    const mgpu::trace::ApiCall* at = observed == ncclSuccess ? nullptr : failed_call(calls, observed);
    mgpu::check::Finding finding{what + " returns " + result_text(expected) + " (the rest of this check needs it)",
                                 result_text(expected), observed_result(observed, calls, at), at ? at->file : "",
                                 at ? at->line : 0, false, ""};
    mgpu::check::fail_and_stop(finding);
}

}  // namespace lesson4
