// Checks that report what a student needs: what was checked, the expected and the observed
// value, and the file:line of the call of theirs that went wrong, when the trace knows it.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime.h>

#include "mgpu/trace.h"
#include "support/student_calls.h"

namespace suite {

// "cudaErrorPeerAccessUnsupported (217)".
std::string error_text(cudaError_t code);
std::string error_text(int code);

// "1 stream", "3 streams"; `plural` where adding an s is wrong ("entry", "entries").
std::string counted(std::size_t count, const std::string& singular, const std::string& plural = "");

// Fails the case with a finding when `holds` is false; returns `holds`. `section` names the
// lesson section that teaches the fix when it is not the criterion's own.
bool expect(bool holds, const std::string& check, const std::string& expected, const std::string& observed,
            const mgpu::trace::ApiCall* at = nullptr, const std::string& section = "");

// The same for a wrong value that does not say why (wrong elements): reports show it after the
// findings that name a cause.
bool expect_value(bool holds, const std::string& check, const std::string& expected, const std::string& observed);

// The function returned `expected`.
bool expect_status(cudaError_t observed, cudaError_t expected, const std::string& call_text, const StudentCalls& calls);

// Ends the case when a function the check needs did not work: later checks would only repeat it.
void require_status(cudaError_t observed, cudaError_t expected, const std::string& call_text,
                    const StudentCalls& calls);

// cudaPeekAtLastError() is cudaSuccess after the student's call; if not, names the call of
// theirs that most likely left the error.
bool expect_no_error_left(const StudentCalls& calls, const std::string& after_what);

// The current device is `device`.
bool expect_current_device(int device, const std::string& after_what);

}  // namespace suite
