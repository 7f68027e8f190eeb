// control.h on real GPUs: the checker's scenarios name a simulated machine; here each scenario
// runs on the GPUs at hand when they can host it (enough devices, the same peer answers for the
// pairs it uses), and is reported as skipped otherwise. Schedules and injected faults exist only
// in the simulator, so scenarios that ask for them are skipped too.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "cupti_tracer.h"
#include "mgpu/sim/control.h"

namespace mgpu::sim {
namespace {

struct RealState {
    Options options;
    MachineSpec machine;
    bool up = false;
};

RealState& real() {
    static RealState state;
    return state;
}

int real_device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

bool real_can_peer(int a, int b) {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return can != 0;
}

// The CUDA runtime reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER once, when the process starts.
std::optional<std::string> environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}
const std::optional<std::string> visible_devices_at_start = environment("CUDA_VISIBLE_DEVICES");
const std::optional<std::string> device_order_at_start = environment("CUDA_DEVICE_ORDER");

// The scenario's machine must match the real one in every answer the scenario can observe.
void require_hostable(const MachineSpec& wanted, const Options& options) {
    if (options.apply_cuda_visible_devices && (environment("CUDA_VISIBLE_DEVICES") != visible_devices_at_start ||
                                               environment("CUDA_DEVICE_ORDER") != device_order_at_start))
        throw EnvironmentFixedAtStart("the scenario sets CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER inside the process; "
                                  "the CUDA runtime reads them only once, when the process starts");
    if (options.schedule.kind != ScheduleKind::Eager)
        throw ScenarioUnavailable("the " + to_string(options.schedule) +
                                  " schedule reorders device work in the simulator only");
    const Faults& f = options.faults;
    if (f.malloc_fails_at || f.enable_gives_711_at || f.lost_device >= 0 || !f.no_peer_pairs.empty())
        throw ScenarioUnavailable("injected faults exist in the simulator only");
    if (!wanted.has_driver) throw ScenarioUnavailable("needs a machine without a GPU driver");
    const int have = real_device_count();
    const int need = static_cast<int>(wanted.devices.size());
    if (need > have)
        throw ScenarioUnavailable("needs " + std::to_string(need) + " GPUs (" + wanted.name + "); this machine has " +
                                  std::to_string(have));
    for (int a = 0; a < need; ++a)
        for (int b = 0; b < need; ++b) {
            if (a == b) continue;
            const bool want = wanted.links[a][b].can_peer;
            if (want != real_can_peer(a, b))
                throw ScenarioUnavailable("needs GPUs " + std::to_string(a) + " and " + std::to_string(b) +
                                          (want ? " to be peers" : " not to be peers") + " (" + wanted.name + ")");
        }
}

DeviceSpec describe_real_device(int device) {
    DeviceSpec spec;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return spec;
    spec.name = prop.name;
    spec.total_mem = prop.totalGlobalMem;
    spec.major = prop.major;
    spec.minor = prop.minor;
    spec.sm_count = prop.multiProcessorCount;
    spec.l2_cache_size = prop.l2CacheSize;
    spec.memory_bus_width = prop.memoryBusWidth;
    spec.shared_mem_per_block = prop.sharedMemPerBlock;
    spec.shared_mem_per_block_optin = prop.sharedMemPerBlockOptin;
    spec.async_engine_count = prop.asyncEngineCount;
    spec.pci_domain = prop.pciDomainID;
    spec.pci_bus = prop.pciBusID;
    spec.pci_device = prop.pciDeviceID;
    // As nvidia-smi -L prints it, the spelling the simulator's machines use too.
    char uuid[48];
    const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    spec.uuid = uuid;
    cudaDeviceGetAttribute(&spec.clock_khz, cudaDevAttrClockRate, device);
    std::size_t free_bytes = 0, total = 0;
    cudaSetDevice(device);
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess) spec.free_mem = free_bytes;
    cudaGetLastError();
    return spec;
}

}  // namespace

void reset_machine(const Options& options) {
    MachineSpec wanted = load_machine(options.topology);
    if (options.apply_cuda_visible_devices) wanted = apply_visible_devices(wanted, std::getenv("CUDA_VISIBLE_DEVICES"));
    require_hostable(wanted, options);
    cupti::start();
    const int count = real_device_count();
    // A device reset drops peer mappings, allocations, streams and a sticky error from the scenario before.
    for (int d = 0; d < count; ++d) {
        cudaSetDevice(d);
        cudaDeviceReset();
    }
    cudaSetDevice(0);
    cudaGetLastError();
    RealState& s = real();
    s.options = options;
    s.machine = MachineSpec{};
    s.machine.name = "real";
    s.machine.description = "the GPUs of this machine";
    for (int d = 0; d < count; ++d) {
        s.machine.devices.push_back(describe_real_device(d));
        s.machine.physical_index.push_back(d);
    }
    s.machine.links.assign(count, std::vector<LinkSpec>(count));
    for (int a = 0; a < count; ++a)
        for (int b = 0; b < count; ++b)
            if (a != b) s.machine.links[a][b].can_peer = real_can_peer(a, b);
    cudaSetDevice(0);
    cupti::clear();
    cupti::reset_counters();
    s.up = true;
}

const MachineSpec& machine() { return real().machine; }
const Options& options() { return real().options; }
const mgpu::trace::Trace& trace() { return cupti::trace(); }
void clear_trace() { cupti::clear(); }
double host_now_us() { return cupti::host_now_us(); }

void drain_all() {
    int current = 0;
    cudaGetDevice(&current);
    for (int d = 0; d < real_device_count(); ++d) {
        cudaSetDevice(d);
        cudaDeviceSynchronize();
    }
    cudaSetDevice(current);
}

std::size_t device_bytes_in_use(int device) { return cupti::device_bytes_in_use(device); }
std::size_t live_device_allocations(int device) { return cupti::live_device_allocations(device); }
std::size_t live_streams() { return static_cast<std::size_t>(cupti::counters().streams); }
std::size_t live_events() { return static_cast<std::size_t>(cupti::counters().events); }
std::size_t live_pinned_host_allocations() { return static_cast<std::size_t>(cupti::counters().pinned_host_allocations); }
std::size_t live_page_locked_ranges() {
    const cupti::Counters& c = cupti::counters();
    return static_cast<std::size_t>(c.pinned_host_allocations + c.registered_host_ranges);
}

bool peer_access_enabled(int from, int to) { return cupti::counters().open_directions.count({from, to}) != 0; }

}  // namespace mgpu::sim
