#include "sandbox.h"

#include <mutex>

#include "process_runner.h"

namespace mgpu::judge {

namespace {

constexpr const char* kTmpSize = "268435456";   // 256 MiB of private /tmp and /dev/shm

std::vector<std::string> bubblewrap_prefix(const SandboxView& view) {
    std::vector<std::string> argv{"bwrap",        "--unshare-all", "--die-with-parent", "--new-session",
                                  "--cap-drop",   "ALL",           "--ro-bind",         "/",
                                  "/",            "--dev",         "/dev",              "--proc",
                                  "/proc",        "--size",        kTmpSize,            "--tmpfs",
                                  "/tmp",         "--size",        kTmpSize,            "--tmpfs",
                                  "/dev/shm"};
    for (const auto& path : view.readable_paths) {
        if (path == "/tmp" || path.rfind("/tmp/", 0) == 0) argv.insert(argv.end(), {"--ro-bind", path, path});
    }
    for (const auto& dir : view.hidden_dirs) {
        argv.insert(argv.end(), {"--tmpfs", dir});
    }
    for (const auto& dir : view.writable_dirs) {
        argv.insert(argv.end(), {"--bind", dir, dir});
    }
    for (const auto& file : view.device_files) {
        argv.insert(argv.end(), {"--dev-bind", file, file});
    }
    argv.push_back("--");
    return argv;
}

std::vector<std::string> unshare_prefix() {
    return {"unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc", "--"};
}

bool works(const std::vector<std::string>& prefix) {
    ProcessSpec probe;
    probe.argv = prefix;
    probe.argv.push_back("true");
    probe.environment = {"PATH=" + judge_path_variable()};
    probe.limits.cpu_seconds = 10;
    ProcessOutcome outcome = run_process(probe);
    return outcome.started && outcome.exited && outcome.exit_code == 0;
}

Sandbox probe_sandbox() {
    Sandbox sandbox;
    if (works(bubblewrap_prefix({}))) {
        sandbox.kind = SandboxKind::Bubblewrap;
    } else if (works(unshare_prefix())) {
        sandbox.kind = SandboxKind::Unshare;
    }
    return sandbox;
}

}  // namespace

std::vector<std::string> Sandbox::prefix(const SandboxView& view) const {
    switch (kind) {
        case SandboxKind::Bubblewrap: return bubblewrap_prefix(view);
        case SandboxKind::Unshare: return unshare_prefix();
        case SandboxKind::ProcessGroup: return {};
    }
    return {};
}

std::string Sandbox::describe() const {
    switch (kind) {
        case SandboxKind::Bubblewrap: return "bubblewrap (PID namespace, no network, read-only files)";
        case SandboxKind::Unshare: return "unshare (PID namespace)";
        case SandboxKind::ProcessGroup: return "process group only (no namespaces available)";
    }
    return "";
}

const Sandbox& available_sandbox(bool allowed) {
    static std::once_flag probed;
    static Sandbox best;
    static const Sandbox plain;
    if (!allowed) return plain;
    std::call_once(probed, [] { best = probe_sandbox(); });
    return best;
}

}  // namespace mgpu::judge
