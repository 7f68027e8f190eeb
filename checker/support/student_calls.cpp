#include "support/student_calls.h"

#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"
#include "mgpu/timeline.h"

namespace suite {

namespace {

std::uint64_t newest_seq() {
    const auto& calls = mgpu::sim::trace().calls;
    return calls.empty() ? 0 : calls.back().seq;
}

}  // namespace

void StudentCalls::begin(const std::string& what) {
    mgpu::check::step(what);
    after_seq_ = newest_seq();
}

void StudentCalls::end() {
    last_seq_ = newest_seq();
    returned_at_us_ = mgpu::sim::host_now_us();
}

std::vector<mgpu::trace::ApiCall> StudentCalls::calls() const {
    std::vector<mgpu::trace::ApiCall> found;
    for (const auto& call : mgpu::sim::trace().calls) {
        if (call.seq > after_seq_ && call.seq <= last_seq_) found.push_back(call);
    }
    return found;
}

std::vector<mgpu::trace::ApiCall> StudentCalls::calls_named(const std::string& name) const {
    std::vector<mgpu::trace::ApiCall> found;
    for (const auto& call : calls()) {
        if (call.name == name) found.push_back(call);
    }
    return found;
}

std::vector<mgpu::trace::ApiCall> StudentCalls::successful(const std::string& name) const {
    std::vector<mgpu::trace::ApiCall> found;
    for (const auto& call : calls_named(name)) {
        if (call.result == 0) found.push_back(call);
    }
    return found;
}

const mgpu::trace::ApiCall* StudentCalls::last_failed_call() const {
    bool any = false;
    for (const auto& call : calls()) {
        if (call.result != 0) {
            last_failed_ = call;
            any = true;
        }
    }
    return any ? &last_failed_ : nullptr;
}

std::vector<mgpu::trace::DeviceOp> StudentCalls::ops() const {
    std::vector<mgpu::trace::DeviceOp> found;
    for (const auto& op : mgpu::sim::trace().ops) {
        if (op.api_seq > after_seq_ && op.api_seq <= last_seq_) found.push_back(op);
    }
    return found;
}

std::vector<mgpu::trace::DeviceOp> StudentCalls::ops_of(mgpu::trace::OpKind kind) const {
    std::vector<mgpu::trace::DeviceOp> found;
    for (const auto& op : ops()) {
        if (op.kind == kind) found.push_back(op);
    }
    return found;
}

void attach_timeline(const StudentCalls& calls, const std::string& what) {
    mgpu::trace::Trace trace;
    trace.calls = calls.calls();
    trace.ops = calls.ops();
    mgpu::trace::TimelineOptions options;
    options.title = "Timeline of " + what;
    options.read_source_names = true;   // from the student's file, which the judge built into the checker
    options.source_texts = mgpu::check::student_sources();
    options.notes = {"What your code ran in the check that failed: each GPU's streams, copy engines and links, and "
                     "the host's waits."};
    mgpu::check::attach_timeline(mgpu::trace::timeline_html(trace, options));
}

std::string where(const mgpu::trace::ApiCall& call) {
    if (call.file.empty()) return "";
    return call.file + ":" + std::to_string(call.line);
}

}  // namespace suite
