#include "expectations.h"

#include "mgpu/check/harness.h"

namespace lesson3 {

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

// What the student reads as the observed status. A function that returns cudaErrorNotSupported
// without making a single CUDA call is, in practice, the skeleton's placeholder.
std::string observed_status(cudaError_t observed, const StudentCalls& calls) {
    std::string text = error_text(observed);
    if (observed == cudaErrorNotSupported && calls.calls().empty()) {
        text += " without any CUDA call: is this still the skeleton's placeholder (its TODO not written yet)?";
    }
    return text;
}

}  // namespace

std::string error_text(cudaError_t code) { return std::string(cudaGetErrorName(code)) + " (" + std::to_string(code) + ")"; }

std::string error_text(int code) { return error_text(static_cast<cudaError_t>(code)); }

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
                  observed_status(observed, calls), source);
}

void require_status(cudaError_t observed, cudaError_t expected, const std::string& call_text,
                    const StudentCalls& calls) {
    if (observed == expected) return;
    const mgpu::trace::ApiCall* source = observed == cudaSuccess ? nullptr : call_returning(calls, observed);
    mgpu::check::fail_and_stop(finding(call_text + " returns " + error_text(expected) +
                                           " (the rest of this check needs it)",
                                       error_text(expected), observed_status(observed, calls), source));
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

}  // namespace lesson3
