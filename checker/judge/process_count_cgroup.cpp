#include "process_count_cgroup.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace mgpu::judge {

namespace fs = std::filesystem;

namespace {

// The folder under which the judge may make pids cgroups: cgroup v1's pids hierarchy, or on a
// unified (v2) hierarchy the judge's own cgroup when pids is delegated to it. "" = none.
std::string pids_parent() {
    std::error_code error;
    if (fs::exists("/sys/fs/cgroup/pids/cgroup.procs", error)) return "/sys/fs/cgroup/pids";
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {
        if (line.rfind("0::", 0) != 0) continue;
        const fs::path own = fs::path("/sys/fs/cgroup") / line.substr(3);
        std::ifstream controllers(own / "cgroup.subtree_control");
        std::string text((std::istreambuf_iterator<char>(controllers)), std::istreambuf_iterator<char>());
        if (text.find("pids") != std::string::npos) return own.string();
    }
    return "";
}

bool write_text(const fs::path& path, const std::string& text) {
    std::ofstream file(path);
    file << text;
    file.flush();
    return static_cast<bool>(file);
}

}  // namespace

std::unique_ptr<ProcessCountCgroup> ProcessCountCgroup::create(std::size_t max_tasks) {
    static const std::string parent = pids_parent();
    static std::atomic<int> counter{0};
    if (parent.empty()) return nullptr;
    const fs::path dir =
        fs::path(parent) / ("mgpu-judge-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)));
    std::error_code error;
    if (!fs::create_directory(dir, error) || error) return nullptr;
    std::unique_ptr<ProcessCountCgroup> cgroup(new ProcessCountCgroup(dir.string()));
    if (!write_text(dir / "pids.max", std::to_string(max_tasks))) return nullptr;   // the destructor removes it
    return cgroup;
}

ProcessCountCgroup::ProcessCountCgroup(std::string dir) : dir_(std::move(dir)), procs_file_(dir_ + "/cgroup.procs") {}

ProcessCountCgroup::~ProcessCountCgroup() {
    // A killed task leaves the cgroup only once it is reaped: try for a while, then leave it (an
    // empty cgroup costs nothing, and a later judge does not reuse the name).
    for (int attempt = 0; attempt < 50; ++attempt) {
        if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
        kill_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool ProcessCountCgroup::limit_reached() const {
    std::ifstream events(dir_ + "/pids.events");
    std::string name;
    long long count = 0;
    while (events >> name >> count) {
        if (name == "max" && count > 0) return true;
    }
    return false;
}

void ProcessCountCgroup::kill_all() const {
    std::ifstream procs(procs_file_);
    pid_t pid = 0;
    while (procs >> pid) {
        if (pid > 0) ::kill(pid, SIGKILL);
    }
}

bool process_count_cgroup_available() {
    static std::once_flag once;
    static bool available = false;
    std::call_once(once, [] { available = ProcessCountCgroup::create(16) != nullptr; });
    return available;
}

}  // namespace mgpu::judge
