#include "sandbox.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "process_count_cgroup.h"

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
    // Parents before children: bubblewrap mounts in order, and a later mount covers an earlier one.
    auto by_depth = [](std::vector<std::string> paths) {
        std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
            return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
        });
        return paths;
    };
    auto inside = [](const std::string& path, const std::string& dir) {
        return path == dir || (path.size() > dir.size() && path.rfind(dir, 0) == 0 && path[dir.size()] == '/');
    };
    for (const auto& dir : by_depth(view.hidden_dirs)) {
        argv.insert(argv.end(), {"--tmpfs", dir});
    }
    for (const auto& path : by_depth(view.readable_paths)) {
        bool covered = inside(path, "/tmp");
        for (const auto& dir : view.hidden_dirs) covered = covered || inside(path, dir);
        std::error_code error;
        if (covered && std::filesystem::exists(path, error)) argv.insert(argv.end(), {"--ro-bind", path, path});
    }
    for (const auto& dir : by_depth(view.hidden_again)) {
        std::error_code error;
        if (std::filesystem::is_directory(dir, error)) argv.insert(argv.end(), {"--tmpfs", dir});
    }
    for (const auto& dir : view.writable_dirs) {
        argv.insert(argv.end(), {"--bind", dir, dir});
    }
    for (const auto& file : view.device_files) {
        argv.insert(argv.end(), {"--dev-bind", file, file});
    }
    // Hidden folders are empty and stay so: a write there would only seem to succeed. (Done last:
    // the binds inside them, writable ones too, needed their mount points made first.)
    for (const auto& dir : view.hidden_dirs) argv.insert(argv.end(), {"--remount-ro", dir});
    for (const auto& dir : by_depth(view.hidden_again)) {
        std::error_code error;
        if (std::filesystem::is_directory(dir, error)) argv.insert(argv.end(), {"--remount-ro", dir});
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
    std::string text;
    switch (kind) {
        case SandboxKind::Bubblewrap:
            text = "bubblewrap: PID namespace, no network, read-only files, a private /tmp; the kit's solutions, "
                   "master sources, mutants, checker sources, the judge's files and other students' folders are "
                   "hidden from the compiler and the tests";
            break;
        case SandboxKind::Unshare:
            text = "unshare: PID namespace only. Weaker: no bubblewrap here, so the files are not hidden (the "
                   "compiler and the tests could read the kit's solutions and other students' folders) and the "
                   "network is open";
            break;
        case SandboxKind::ProcessGroup:
            text = "process group only. Weaker: no namespaces here, so the files are not hidden (the compiler and "
                   "the tests could read the kit's solutions and other students' folders), the network is open, "
                   "and a process that leaves the group is found only by the judge's scan of its descendants";
            break;
    }
    text += process_count_cgroup_available()
                ? ". Limits: processes (a pids cgroup per run, and the judge's count)"
                : ". Limits: processes (the judge's count only: no pids cgroup can be made here, so a fork bomb is "
                  "ended when the judge sees it rather than refused by the kernel)";
    text += ", CPU time, memory, output, file size, open files";
    return text;
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
