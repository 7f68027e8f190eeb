// Lesson 1 driver: runs the functions of devices.cu on this machine, one step per numbered task, and says
// what works. `tools/mgpu run 1` builds and runs it (add --topology NAME for another simulated machine,
// or set CUDA_VISIBLE_DEVICES); `tools/mgpu check 1` grades the same functions more thoroughly.
#include "devices.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int failed_checks = 0;

bool expect(bool ok, const std::string& what, const std::string& hint)
{
    if (ok) {
        std::printf("  PASS  %s\n", what.c_str());
    } else {
        ++failed_checks;
        std::printf("  FAIL  %s\n        what to do: %s\n", what.c_str(), hint.c_str());
    }
    return ok;
}

std::string gib(std::size_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

int main()
{
    std::printf("Task 1: count_devices\n");
    const int count = count_devices();
    const bool counted = expect(count >= 0, "count_devices() = " + std::to_string(count),
                                "write task 1 in exercises/01-devices/devices.cu (section 1.2)");
    if (count > 0) {
        expect(cudaPeekAtLastError() == cudaSuccess, "no error left behind by count_devices",
               "count_devices should make no failing call on a machine with devices (section 1.2)");
    } else if (count == 0) {
        const cudaError_t why = cudaPeekAtLastError();
        std::printf("  (nothing usable: the runtime answers %d (%s) to every call now, cudaGetLastError included)\n",
                    static_cast<int>(why), cudaGetErrorName(why));
    }
    if (!counted) {
        std::printf("The other tasks need the count: write task 1 first.\n");
        return 1;
    }
    if (count == 0) {
        std::printf("No device to work with here: try --topology hgx-h200-8 or mixed-3.\n");
        return failed_checks == 0 ? 0 : 1;
    }

    std::printf("Task 2: list_devices\n");
    const std::vector<DeviceInfo> devices = list_devices();
    expect(static_cast<int>(devices.size()) == count, std::to_string(devices.size()) + " records for " +
           std::to_string(count) + " devices", "one DeviceInfo per ordinal, 0 to count - 1 (task 2, section 1.3)");
    for (const DeviceInfo& d : devices) {
        std::printf("    %d  %-24s cc %d.%d  %3d SMs  %10s  %s  %s\n", d.ordinal, d.name.c_str(), d.major, d.minor,
                    d.multiprocessors, gib(d.total_memory).c_str(), d.pci_bus_id.c_str(), d.uuid.c_str());
    }

    // A "no" is only worth a PASS once the function has answered a "yes": an unwritten one says no
    // to everything.
    std::printf("Task 3: find_device\n");
    bool found_any = false;
    for (const DeviceInfo& d : devices) {
        found_any = expect(find_device(d.pci_bus_id) == d.ordinal, "find_device(\"" + d.pci_bus_id + "\") = " +
                           std::to_string(d.ordinal), "compare bus ids as addresses (task 3, section 1.5)") || found_any;
        found_any = expect(find_device(d.uuid) == d.ordinal, "find_device(\"" + d.uuid + "\") = " +
                           std::to_string(d.ordinal), "compare UUIDs in lowercase (task 3, section 1.5)") || found_any;
    }
    if (found_any)
        expect(find_device("0000:FF:1F.0") == -1, "find_device of an address with no GPU = -1",
               "return -1 when nothing matches (task 3)");
    else
        std::printf("  ....  find_device found no device at all: is task 3 written yet?\n");

    std::printf("Task 4: pick_device\n");
    const int any = pick_device(Requirements{});
    const bool picked = expect(any >= 0 && any < count, "pick_device(no requirements) = " + std::to_string(any),
           "every device meets no requirements: return the best by the header's rule (task 4, section 1.8)");
    if (picked)
        expect(pick_device(Requirements{99, 0, 0}) == -1, "pick_device(compute capability 99.0) = -1",
               "refuse when no device qualifies, whatever cudaChooseDevice says (task 4, section 1.8)");
    else
        std::printf("  ....  the refusal of an impossible request is checked once a possible one is answered\n");

    std::printf("Task 5: DeviceScope\n");
    int before = -1, inside = -1, after = -1;
    cudaGetDevice(&before);
    // On one device "current inside" and "given back" hold with nothing written: say so instead.
    bool switched = false;
    {
        DeviceScope scope(count - 1);
        cudaGetDevice(&inside);
        switched = expect(scope.status() == cudaSuccess && inside == count - 1, "device " + std::to_string(count - 1) +
               " current inside the scope", "make the device current in the constructor (task 5a, section 1.10)");
    }
    cudaGetDevice(&after);
    if (switched && count > 1)
        expect(after == before, "device " + std::to_string(before) + " current again after the scope",
               "give the caller's device back in the destructor (task 5b, section 1.10)");
    else
        std::printf("  ....  giving the device back shows only once the scope switches to another device%s\n",
                    count > 1 ? "" : " (run on a machine with several: --topology mixed-3)");

    std::printf("Task 6: for_each_device\n");
    std::vector<int> seen(static_cast<std::size_t>(count), -1);
    std::atomic<int> calls{0};
    const cudaError_t status = for_each_device([&](int device) {
        ++calls;
        int current = -1;
        cudaGetDevice(&current);
        seen[static_cast<std::size_t>(device)] = current;
    });
    bool all_right = status == cudaSuccess && calls == count;
    for (int d = 0; d < count; ++d) all_right = all_right && seen[static_cast<std::size_t>(d)] == d;
    expect(all_right, "work(d) ran once per device with d current",
           "one thread per device, each calling cudaSetDevice first (task 6, section 1.11)");

    std::printf("%s\n", failed_checks == 0 ? "Everything here works: run tools/mgpu check 1 for the full grading."
                                           : "Some steps do not work yet.");
    return failed_checks == 0 ? 0 : 1;
}
