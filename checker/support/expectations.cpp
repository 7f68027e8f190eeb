#include "support/expectations.h"

#include "mgpu/check/harness.h"

namespace suite {

namespace {

mgpu::check::Finding finding(const std::string& check, const std::string& expected, const std::string& observed,
                             const mgpu::trace::ApiCall* at) {
    mgpu::check::Finding result{check, expected, observed, "", 0};
    if (at != nullptr) {
        result.file = at->file;
        result.line = at->line;
    }
    return result;
}

// The student's call that returned `code` last, as the likely source of a returned error.
const mgpu::trace::ApiCall* call_returning(const StudentCalls& calls, int code) {
    static mgpu::trace::ApiCall found;
    bool any = false;
    for (const auto& call : calls.calls()) {
        if (call.result == code) {
            found = call;
            any = true;
        }
    }
    return any ? &found : nullptr;
}

// cudaEventElapsedTime answers cudaErrorNotReady when its end event has not happened yet: the host
// read the time before waiting for the stream the event was recorded on. Names that stream and
// its device, and the wait that is missing; "" when the trace does not show the record.
std::string missing_wait_before_elapsed_time(const mgpu::trace::ApiCall& elapsed, const StudentCalls& calls) {
    if (elapsed.args.size() < 2) return "";
    const long long end_event = elapsed.args[1];
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();
    const mgpu::trace::ApiCall* record = nullptr;
    for (const auto& call : made)
        if (call.seq < elapsed.seq && call.name == "cudaEventRecord" && !call.args.empty() && call.args[0] == end_event &&
            call.result == 0)
            record = &call;
    if (record == nullptr) return "";
    int device = record->device;
    for (const auto& op : calls.ops())
        if (op.api_seq == record->seq) device = op.device;
    const std::string where_recorded = where(*record);
    return ": the end event, recorded on stream#" + std::to_string(record->stream) + " of device " +
           std::to_string(device) + (where_recorded.empty() ? "" : " at " + where_recorded) +
           ", had not happened yet, because nothing waited for that stream before cudaEventElapsedTime read the "
           "time. Wait for device " + std::to_string(device) + "'s stream first (cudaStreamSynchronize on it, or "
           "cudaEventSynchronize on the end event)";
}

// What the student reads as the observed status. A function that returns cudaErrorNotSupported
// without making a single CUDA call is, in practice, the skeleton's placeholder.
std::string observed_status(cudaError_t observed, const StudentCalls& calls, const mgpu::trace::ApiCall* source) {
    std::string text = error_text(observed);
    if (observed == cudaErrorNotSupported && calls.calls().empty()) {
        text += " without any CUDA call: is this still the skeleton's placeholder (its TODO not written yet)?";
    }
    if (observed == cudaErrorNotReady && source != nullptr && source->name == "cudaEventElapsedTime") {
        text += " from cudaEventElapsedTime" + missing_wait_before_elapsed_time(*source, calls);
    }
    return text;
}

}  // namespace

std::string error_text(cudaError_t code) { return std::string(cudaGetErrorName(code)) + " (" + std::to_string(code) + ")"; }

std::string error_text(int code) { return error_text(static_cast<cudaError_t>(code)); }

std::string counted(std::size_t count, const std::string& singular, const std::string& plural) {
    return std::to_string(count) + " " + (count == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

bool expect(bool holds, const std::string& check, const std::string& expected, const std::string& observed,
            const mgpu::trace::ApiCall* at, const std::string& section) {
    if (!holds) {
        mgpu::check::Finding result = finding(check, expected, observed, at);
        result.section = section;
        mgpu::check::fail(result);
    }
    return holds;
}

bool expect_value(bool holds, const std::string& check, const std::string& expected, const std::string& observed) {
    if (!holds) {
        mgpu::check::Finding result = finding(check, expected, observed, nullptr);
        result.symptom = true;
        mgpu::check::fail(result);
    }
    return holds;
}

bool expect_status(cudaError_t observed, cudaError_t expected, const std::string& call_text, const StudentCalls& calls) {
    if (observed == expected) return true;
    const mgpu::trace::ApiCall* source = observed == cudaSuccess ? nullptr : call_returning(calls, observed);
    return expect(false, call_text + " returns " + error_text(expected), error_text(expected),
                  observed_status(observed, calls, source), source);
}

void require_status(cudaError_t observed, cudaError_t expected, const std::string& call_text,
                    const StudentCalls& calls) {
    if (observed == expected) return;
    const mgpu::trace::ApiCall* source = observed == cudaSuccess ? nullptr : call_returning(calls, observed);
    mgpu::check::fail_and_stop(finding(call_text + " returns " + error_text(expected) +
                                           " (the rest of this check needs it)",
                                       error_text(expected), observed_status(observed, calls, source), source));
}

bool expect_no_error_left(const StudentCalls& calls, const std::string& after_what) {
    // Peek, not Get: reading the error must not change what a later check sees.
    const cudaError_t left = cudaPeekAtLastError();
    if (left == cudaSuccess) return true;
    return expect(false, "no error is left behind after " + after_what + " (cudaPeekAtLastError)",
                  error_text(cudaSuccess), error_text(left) + " left as the last error", call_returning(calls, left));
}

bool expect_current_device(int device, const std::string& after_what) {
    int current = -1;
    cudaGetDevice(&current);
    return expect(current == device, "the caller's current device is given back after " + after_what,
                  "device " + std::to_string(device) + " current", "device " + std::to_string(current) + " current");
}

}  // namespace suite
