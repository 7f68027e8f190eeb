#include "gpu_probe.h"

#include <dlfcn.h>

#include <filesystem>
#include <sstream>

#include "process_runner.h"

namespace mgpu::judge {

namespace fs = std::filesystem;

namespace {

// Asks the driver directly; -1 when libcuda cannot be loaded or does not answer.
int driver_device_count(std::string* problem) {
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        *problem = "the NVIDIA driver library libcuda.so.1 cannot be loaded";
        return -1;
    }
    using InitFn = int (*)(unsigned);
    using CountFn = int (*)(int*);
    auto init = reinterpret_cast<InitFn>(::dlsym(library, "cuInit"));
    auto count_devices = reinterpret_cast<CountFn>(::dlsym(library, "cuDeviceGetCount"));
    int count = -1;
    if (init == nullptr || count_devices == nullptr) {
        *problem = "libcuda.so.1 lacks cuInit or cuDeviceGetCount";
    } else if (int status = init(0); status != 0) {
        *problem = "the NVIDIA driver does not start (cuInit returned " + std::to_string(status) + ")";
    } else if (count_devices(&count) != 0) {
        *problem = "the NVIDIA driver does not list its devices";
        count = -1;
    }
    // The library stays loaded: unloading a driver library mid-process is not worth the risk.
    return count;
}

int nvidia_smi_device_count() {
    ProcessSpec spec;
    spec.argv = {"nvidia-smi", "-L"};
    spec.environment = {"PATH=" + judge_path_variable()};
    spec.limits.cpu_seconds = 20;
    ProcessOutcome outcome = run_process(spec);
    if (!outcome.started || !outcome.exited || outcome.exit_code != 0) return -1;
    std::istringstream lines(outcome.output);
    std::string line;
    int count = 0;
    while (std::getline(lines, line)) count += line.rfind("GPU ", 0) == 0;
    return count;
}

}  // namespace

GpuProbe probe_gpu() {
    GpuProbe probe;
    std::error_code error;
    if (!fs::exists("/dev/nvidiactl", error)) {
        probe.reason = "no NVIDIA GPU driver on this machine (/dev/nvidiactl does not exist)";
        return probe;
    }
    for (const auto& entry : fs::directory_iterator("/dev", error)) {
        if (entry.path().filename().string().rfind("nvidia", 0) == 0) probe.device_files.push_back(entry.path().string());
    }
    std::string problem;
    int count = driver_device_count(&problem);
    if (count < 0) count = nvidia_smi_device_count();
    if (count <= 0) {
        probe.reason = count == 0 ? "the NVIDIA driver is installed but shows no GPU"
                                  : (problem.empty() ? "the NVIDIA driver does not answer" : problem);
        return probe;
    }
    probe.usable = true;
    probe.devices = count;
    return probe;
}

}  // namespace mgpu::judge
