// Whether this machine has an NVIDIA GPU the `cuda` backend can grade on: the driver's control
// file, then the driver itself asked for its devices (through libcuda, loaded only for the
// question, so the judge does not depend on CUDA), else `nvidia-smi -L`.
#pragma once

#include <string>
#include <vector>

namespace mgpu::judge {

struct GpuProbe {
    bool usable = false;
    int devices = 0;
    std::string reason;                       // why not, in plain words (when not usable)
    std::vector<std::string> device_files;    // /dev/nvidia*: what a sandboxed case must see
};

GpuProbe probe_gpu();

}  // namespace mgpu::judge
