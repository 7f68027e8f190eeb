// Lesson 1, device enumeration and selection: write the bodies marked TODO(1) to TODO(6).
// Each TODO says what to write and names the section of lessons/01-devices/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 1 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
//   tools/mgpu run 1     builds this file with main.cu and shows what works so far
//   tools/mgpu check 1   grades it on several simulated machines
// Every body compiles as given and returns a harmless default until you write it.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

// "GPU-" and the 16 bytes of a cudaUUID_t as 8-4-4-4-12 lowercase hex digits: the form nvidia-smi -L
// prints, so that a UUID from this program can be pasted into CUDA_VISIBLE_DEVICES.
// [[maybe_unused]] on the helpers keeps the compiler quiet until your code uses them; you may delete it then.
[[maybe_unused]] std::string uuid_text(const cudaUUID_t& uuid)
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

[[maybe_unused]] std::string lowercase(std::string text)
{
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// Where a board sits on the PCI bus. Compared as numbers, so "0000:1B:00.0" (CUDA) and
// "00000000:1b:00.0" (nvidia-smi) are the same address.
struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0;
    bool operator==(const PciAddress&) const = default;
};

// "domain:bus:device.function" in hexadecimal, the domain 4 or 8 digits long; nullopt when `id` is not
// in that form.
[[maybe_unused]] std::optional<PciAddress> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return PciAddress{domain, bus, device};
}

// The device's PCI address from three attributes: cheap, and no context needed.
[[maybe_unused]] std::optional<PciAddress> pci_address_of(int device)
{
    int domain = 0, bus = 0, slot = 0;
    if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    return PciAddress{static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

// Compute capability compared the way versions compare: the major number first, the minor only
// between equal majors. 9.0 meets "at least 8.9"; 8.0 does not.
[[maybe_unused]] bool capability_at_least(int major, int minor, int want_major, int want_minor)
{
    return major > want_major || (major == want_major && minor >= want_minor);
}

}  // namespace

int count_devices()
{
    // TODO(1) (lesson 1, section 1.2; contract: Task 1 in devices.h): the number of devices this
    // process can use, and 0 whenever the runtime says it has none to give.
    return -1;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    // TODO(2) (lesson 1, sections 1.3 and 1.5; contract: Task 2 in devices.h): one DeviceInfo per
    // device, in ordinal order, without making any device current (no context).
    return devices;
}

int find_device(const std::string& id)
{
    // TODO(3) (lesson 1, section 1.5; contract: Task 3 in devices.h): the ordinal of the device a
    // UUID or a PCI bus id names, -1 when none does, no error left behind.
    (void)id;   // delete this line once you use it
    return -1;
}

int pick_device(const Requirements& needs)
{
    // TODO(4) (lesson 1, sections 1.4 and 1.8; contract: Task 4 in devices.h): the best device that
    // meets `needs` by the header's rule, -1 when none does.
    (void)needs;   // delete this line once you use it
    return -1;
}

DeviceScope::DeviceScope(int device)
{
    // TODO(5a) (lesson 1, section 1.10; contract: Task 5 in devices.h), the constructor: make
    // `device` current for the scope, remembering what the caller had.
    (void)device;   // delete this line once you use it
}

DeviceScope::~DeviceScope()
{
    // TODO(5b) (lesson 1, section 1.10; contract: Task 5 in devices.h), the destructor: give the
    // caller's device back on every way out of the scope.
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    // TODO(6) (lesson 1, section 1.11; contract: Task 6 in devices.h): work(d) for every device d,
    // each on a host thread of its own with d current there.
    (void)work;   // delete this line once you use it
    return cudaErrorNotSupported;
}
