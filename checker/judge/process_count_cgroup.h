// A cap on the number of tasks (processes and threads) of one child's tree, held by the kernel:
// a pids cgroup made for the run. A fork bomb then meets a refused fork() instead of filling the
// machine. Why not RLIMIT_NPROC: it counts every process of the real user on the whole machine
// (other cases, the judge, the user's shell), is not enforced for root, and inside a user
// namespace the kernel still checks it against the user's total outside; a cgroup counts the
// run's own tree only. Where no pids cgroup can be made (no cgroup file system, not allowed to
// write it), the judge's own count of the tree (process_runner) is the only limit.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace mgpu::judge {

class ProcessCountCgroup {
public:
    // nullptr where this machine gives the judge no pids cgroup to manage.
    static std::unique_ptr<ProcessCountCgroup> create(std::size_t max_tasks);
    ~ProcessCountCgroup();   // removes the cgroup once its tasks are gone

    ProcessCountCgroup(const ProcessCountCgroup&) = delete;
    ProcessCountCgroup& operator=(const ProcessCountCgroup&) = delete;

    // The file a child writes its own pid to, to enter the cgroup (before exec).
    const std::string& procs_file() const { return procs_file_; }
    // Whether the kernel refused a fork or clone because the cap was reached.
    bool limit_reached() const;
    // SIGKILL to every task in the cgroup, including ones that left the child's process group.
    void kill_all() const;

private:
    explicit ProcessCountCgroup(std::string dir);
    std::string dir_, procs_file_;
};

// Whether run_process can cap a tree's tasks in the kernel here (probed once).
bool process_count_cgroup_available();

}  // namespace mgpu::judge
