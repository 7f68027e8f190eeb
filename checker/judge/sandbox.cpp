#include "sandbox.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "process_count_cgroup.h"

#include "process_runner.h"

namespace mgpu::judge {

namespace {

constexpr const char* kTmpSize = "268435456";   // 256 MiB of private /tmp and /dev/shm

// The host's system folders a compiler and a program need, read-only: /usr (which holds the
// toolchain, the C and C++ libraries and, on Debian, the CUDA Toolkit), the top-level folders
// that are links into it or real folders of their own, and the few files of /etc the loader and
// the toolchain read. Nothing else of the host (no /home, /root, /var, /opt, /srv, /work, other
// checkouts of the kit, /etc/shadow) is in the sandbox unless a view names it.
void add_system_view(std::vector<std::string>& argv) {
    argv.insert(argv.end(), {"--ro-bind", "/usr", "/usr"});
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        std::error_code error;
        const auto status = std::filesystem::symlink_status(top, error);
        if (error) continue;
        if (std::filesystem::is_symlink(status)) {
            argv.insert(argv.end(), {"--symlink", std::filesystem::read_symlink(top, error).string(), top});
        } else if (std::filesystem::is_directory(status)) {
            argv.insert(argv.end(), {"--ro-bind", top, top});
        }
    }
    for (const char* file : {"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                             "/etc/localtime", "/etc/gai.conf"}) {
        argv.insert(argv.end(), {"--ro-bind-try", file, file});
    }
}

std::vector<std::string> bubblewrap_prefix(const SandboxView& view) {
    // The child runs as uid and gid 65534 (nobody) of a user namespace of its own, with no
    // capabilities, in a root that holds only what is bound below.
    std::vector<std::string> argv{"bwrap",      "--unshare-all", "--unshare-user", "--uid",  "65534",
                                  "--gid",      "65534",         "--die-with-parent", "--new-session",
                                  "--cap-drop", "ALL"};
    add_system_view(argv);
    argv.insert(argv.end(), {"--dev", "/dev", "--proc", "/proc", "--size", kTmpSize, "--tmpfs", "/tmp", "--size",
                             kTmpSize, "--tmpfs", "/dev/shm"});
    // CUDA and NCCL read the machine's topology from /sys; the simulator needs none of it.
    if (!view.device_files.empty()) argv.insert(argv.end(), {"--ro-bind", "/sys", "/sys"});
    // Parents before children: bubblewrap mounts in order, and a later mount covers an earlier one.
    auto by_depth = [](std::vector<std::string> paths) {
        std::stable_sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
            return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
        });
        return paths;
    };
    for (const auto& dir : by_depth(view.toolchain_dirs)) argv.insert(argv.end(), {"--ro-bind-try", dir, dir});
    // A hidden folder matters where it lies inside a folder shown above (a kit kept under /usr);
    // elsewhere it is simply an empty folder.
    for (const auto& dir : by_depth(view.hidden_dirs)) {
        argv.insert(argv.end(), {"--tmpfs", dir});
    }
    for (const auto& path : by_depth(view.readable_paths)) {
        std::error_code error;
        if (std::filesystem::exists(path, error)) argv.insert(argv.end(), {"--ro-bind", path, path});
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
            text = "bubblewrap: PID namespace, no network, an unprivileged user (uid 65534, no capabilities), a private "
                   "/tmp, and of the host's files only the system's (/usr and the loader's files of /etc, read-only), "
                   "the lesson's header, the simulator and the student's own file: the kit's solutions, master "
                   "sources, mutants and checker sources, other checkouts, other students' folders and the rest of "
                   "the host are not there";
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
