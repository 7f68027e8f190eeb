// The isolation a child of the judge runs in. bubblewrap where it works (a PID namespace, no
// network, an unprivileged user, only the system's folders and what the view names, a private
// /tmp); else unshare's PID namespace; else a plain process group. Killing a PID namespace's first process ends every process in it,
// so a child that calls setsid cannot outlive its time limit.
#pragma once

#include <string>
#include <vector>

namespace mgpu::judge {

enum class SandboxKind { Bubblewrap, Unshare, ProcessGroup };

// What the child sees, in the order bubblewrap builds it: the system's folders read-only (/usr,
// the top-level links into it, the loader's files of /etc; /sys too where GPUs are used), then
// toolchain_dirs, then hidden_dirs emptied (the kit, the build, the class folder, which matters
// where one lies inside /usr), then readable_paths (the lesson header, the simulator's headers
// and archives), then hidden_again emptied inside those (a lesson's mutants beside its archive),
// then writable_dirs and device_files. Nothing else of the host is there.
struct SandboxView {
    std::vector<std::string> toolchain_dirs;  // a compiler installed outside /usr (the CUDA Toolkit in /opt)
    std::vector<std::string> readable_paths;  // bound read-only
    std::vector<std::string> hidden_dirs;     // replaced by an empty directory inside
    std::vector<std::string> hidden_again;    // emptied after readable_paths are bound
    std::vector<std::string> writable_dirs;   // bound read-write (everything else is read-only)
    std::vector<std::string> device_files;    // real devices the child may open (/dev/nvidia*): bubblewrap's
                                              // own /dev holds only null, zero, random and the like
};

struct Sandbox {
    SandboxKind kind = SandboxKind::ProcessGroup;

    // The command line prefix that runs a program inside the sandbox.
    std::vector<std::string> prefix(const SandboxView& view) const;

    // Inside bubblewrap and unshare a child killed by signal N shows as exit status 128 + N.
    bool reports_signals_as_exit_codes() const { return kind != SandboxKind::ProcessGroup; }

    // The kind and every protection in force, for the report; where the strong sandbox is
    // missing, also what is weaker (grading works all the same).
    std::string describe() const;
};

// The best sandbox this machine allows, probed once per process. `allowed` false gives the plain
// process group (for machines where namespaces are forbidden and probing itself is unwelcome).
const Sandbox& available_sandbox(bool allowed = true);

}  // namespace mgpu::judge
