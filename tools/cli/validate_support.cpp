#include "validate_support.h"

extern char** environ;

namespace mgpu::cli {

std::string ValidateRun::visible_devices() const {
    std::string list;
    for (int device = 0; device < gpus; ++device) list += (device == 0 ? "" : ",") + std::to_string(device);
    return list;
}

namespace {

constexpr std::size_t kOutputLimitBytes = std::size_t{64} << 20;

// The judge's runner takes the child's whole environment.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& changes) {
    std::vector<std::string> environment;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string text = *entry;
        const std::string name = text.substr(0, text.find('='));
        bool changed = false;
        for (const auto& change : changes) changed = changed || change.first == name;
        if (!changed) environment.push_back(text);
    }
    for (const auto& [name, value] : changes) environment.push_back(name + "=" + value);
    return environment;
}

}  // namespace

Captured capture(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& environment) {
    judge::ProcessSpec spec;
    spec.argv = argv;
    spec.environment = child_environment(environment);
    // The kit's own programs on real GPUs, where a host thread may sleep while a GPU works: only
    // the wall clock limits them.
    spec.limits.cpu_seconds = 0;
    spec.limits.blocked_seconds = 0;
    spec.limits.wall_seconds = kCaptureTimeLimitSeconds;
    // The programs are the kit's own and the machine's tools: no memory limit (the simulator and
    // conformance-compare's children are one tree), and all of the output is read, so it is all kept.
    spec.limits.memory_bytes = 0;
    spec.limits.output_bytes = kOutputLimitBytes;
    spec.limits.kept_output_bytes = kOutputLimitBytes / 2;
    spec.limits.file_size_bytes = 0;
    return judge::run_process(spec);
}

bool succeeded(const Captured& run) { return run.started && run.exited && run.exit_code == 0; }

Words describe_end(const Captured& run) {
    if (!run.started) return say(N_("could not start: {}"), run.start_error);
    if (run.out_of_time()) return say(N_("stopped after {} s (its time limit)"), static_cast<int>(run.seconds));
    if (run.output_exceeded()) return say(N_("stopped for printing more than {} MiB"), kOutputLimitBytes >> 20);
    if (!run.exited) return say(N_("ended by {}"), judge::describe_signal(run.signal));
    return say(N_("exit code {}"), run.exit_code);
}

}  // namespace mgpu::cli
