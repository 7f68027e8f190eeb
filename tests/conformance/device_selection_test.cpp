// cuda-facts.md, "Lessons 1 and 2: enumeration, selection, host memory", and lessons-1-2-4.md §1.1-1.3:
// naming devices by PCI bus id, cudaChooseDevice, cudaInitDevice, device flags, cudaDeviceReset,
// CUDA_VISIBLE_DEVICES edge cases and CUDA_DEVICE_ORDER, and where a primary context comes to life.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cctype>
#include <cstring>
#include <string>
#include <thread>

#include "conformance_support.h"
#include "devices_seen.h"
#include "fresh_process.h"

namespace {

constexpr int kUnwritten = conformance::kUnwrittenCount;   // what devices_seen leaves in an unwritten count

// cudaGetDeviceCount's status under a CUDA_VISIBLE_DEVICES value, and the count when it succeeds.
std::pair<cudaError_t, int> count_under(const char* preset, const char* visible) {
    const conformance::DevicesSeen seen = conformance::devices_seen(preset, visible);
    return {seen.count_status, seen.count};
}

// Whether device 0's primary context exists. The real side asks the driver, which answers without
// creating one: cuDevicePrimaryCtxGetState, looked up at run time so that nothing links libcuda.
bool primary_context_active() {
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    using GetState = int (*)(int, unsigned*, int*);
    using GetDevice = int (*)(int*, int);
    static void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) return false;
    static auto get_device = reinterpret_cast<GetDevice>(::dlsym(driver, "cuDeviceGet"));
    static auto get_state = reinterpret_cast<GetState>(::dlsym(driver, "cuDevicePrimaryCtxGetState"));
    int handle = -1;
    unsigned flags = 0;
    int active = -1;
    if (!get_device || !get_state || get_device(&handle, 0) != 0 || get_state(handle, &flags, &active) != 0) return false;
    return active == 1;
#else
    return mgpu::sim::has_context(0);
#endif
}

// What a program does to list its devices, none of which creates a context: the count, each
// device's properties, an attribute and its PCI bus id, and the current device.
cudaError_t enumerate_every_device() {
    int count = 0, value = 0;
    cudaDeviceProp properties;
    char id[32];
    const cudaError_t counted = cudaGetDeviceCount(&count);
    for (int d = 0; d < count; ++d) {
        cudaGetDeviceProperties(&properties, d);
        cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, d);
        cudaDeviceGetPCIBusId(id, sizeof id, d);
    }
    int device = -1;
    cudaGetDevice(&device);
    return counted;
}

// Device 0's primary context after each step: enumeration, cudaSetDevice, cudaDeviceReset,
// cudaInitDevice, cudaDeviceReset, a new thread's first cudaMalloc.
std::string primary_context_story() {
    std::string story;
    const auto note = [&] { story += primary_context_active() ? '1' : '0'; };
    enumerate_every_device();
    note();
    cudaSetDevice(0);
    note();
    cudaDeviceReset();
    note();
    cudaInitDevice(0, 0, 0);
    note();
    cudaDeviceReset();
    note();
    std::thread([] {
        void* buffer = nullptr;
        cudaMalloc(&buffer, 256);
        cudaFree(buffer);
    }).join();
    note();
    cudaDeviceReset();
    return story;
}

int print_primary_context_story() {
    std::printf("%s\n", primary_context_story().c_str());
    return 0;
}

const bool primary_context_probe = conformance::register_probe("primary-contexts", &print_primary_context_story);

}  // namespace

TEST_CASE("cudaDeviceGetPCIBusId writes CUDA's spelling, and cudaDeviceGetByPCIBusId reads it back") {
    conformance::use_machine("h200");
    char id[32] = {};
    REQUIRE(cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaSuccess);
    CHECK(std::string(id) == "0000:00:06.0");   // measured; nvidia-smi prints 00000000:00:06.0
    int device = kUnwritten;
    CHECK(cudaDeviceGetByPCIBusId(&device, id) == cudaSuccess);
    CHECK(device == 0);
}

TEST_CASE("cudaDeviceGetByPCIBusId reads every spelling of an address; a free address gives 101") {
    conformance::use_machine("h200");
    char id[32] = {};
    REQUIRE(cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaSuccess);
    const std::string cuda_form = id;
    std::string smi_form = "0000" + cuda_form;   // nvidia-smi's 8-digit domain
    for (char& c : smi_form) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Measured on the H200: all four name device 0.
    for (const std::string& spelling : {smi_form, cuda_form.substr(5), cuda_form.substr(0, cuda_form.size() - 2)}) {
        CAPTURE(spelling);
        int device = kUnwritten;
        CHECK(cudaDeviceGetByPCIBusId(&device, spelling.c_str()) == cudaSuccess);
        CHECK(device == 0);
    }
    int device = kUnwritten;
    CHECK(cudaDeviceGetByPCIBusId(&device, "0000:FF:1F.0") == cudaErrorInvalidDevice);
    CHECK(device == kUnwritten);
    cudaGetLastError();
}

TEST_CASE("cudaDeviceGetPCIBusId into a buffer too short writes the start of the id and returns 1") {
    conformance::use_machine("h200");
    char id[8] = {};
    CHECK(cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaErrorInvalidValue);
    CHECK(std::string(id) == "0000:00");   // measured
    cudaGetLastError();
}

TEST_CASE("with nothing to offer, cudaGetLastError answers the runtime's code again and again") {
    // Measured on the H200: CUDA_VISIBLE_DEVICES "" and "1" give 100, "0,0" gives 101, and neither can
    // be cleared; cudaGetDevice fails with the same code and leaves its argument unwritten.
    struct Row {
        const char* visible;
        cudaError_t code;
    };
    for (const Row& row : {Row{"", cudaErrorNoDevice}, Row{"1", cudaErrorNoDevice}, Row{"0,0", cudaErrorInvalidDevice}}) {
        CAPTURE(row.visible);
        const conformance::DevicesSeen seen = conformance::devices_seen("h200", row.visible);
        CHECK(seen.count_status == row.code);
        CHECK(seen.last_error == row.code);
        CHECK(seen.last_error_again == row.code);
        CHECK(seen.peek == row.code);
        CHECK(seen.get_device_status == row.code);
        CHECK(seen.current == kUnwritten);
    }
}

TEST_CASE("cudaDeviceGetByPCIBusId with a malformed id returns 1") {
    conformance::use_machine("h200");
    int device = kUnwritten;
    CHECK(cudaDeviceGetByPCIBusId(&device, "not a bus id") == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(device == kUnwritten);
}

TEST_CASE("cudaDeviceGetPCIBusId of a device that does not exist returns 101") {
    conformance::use_machine("h200");
    char id[32] = {};
    CHECK(cudaDeviceGetPCIBusId(id, sizeof id, 1) == cudaErrorInvalidDevice);
    CHECK(cudaDeviceGetPCIBusId(id, sizeof id, -1) == cudaErrorInvalidDevice);
    cudaGetLastError();
}

TEST_CASE("every device of hgx-h200-8 has its own bus id, and each one finds its device") {
    conformance::use_machine("hgx-h200-8");
    for (int d = 0; d < 8; ++d) {
        CAPTURE(d);
        char id[32] = {};
        REQUIRE(cudaDeviceGetPCIBusId(id, sizeof id, d) == cudaSuccess);
        int found = -1;
        CHECK(cudaDeviceGetByPCIBusId(&found, id) == cudaSuccess);
        CHECK(found == d);
        int bus = -1;
        CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d) == cudaSuccess);
        cudaDeviceProp properties;
        REQUIRE(cudaGetDeviceProperties(&properties, d) == cudaSuccess);
        CHECK(properties.pciBusID == bus);
    }
}

TEST_CASE("cudaChooseDevice answers device 0 and success even for compute capability 99.0") {
    conformance::use_machine("h200");
    cudaDeviceProp request;
    std::memset(&request, 0, sizeof request);
    request.major = 99;
    int device = kUnwritten;
    CHECK(cudaChooseDevice(&device, &request) == cudaSuccess);
    CHECK(device == 0);
}

TEST_CASE("cudaInitDevice of a device that does not exist returns 101") {
    conformance::use_machine("h200");
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(cudaInitDevice(count, 0, 0) == cudaErrorInvalidDevice);
    cudaGetLastError();
}

TEST_CASE("cudaInitDevice initialises a device without making it current; its flags include cudaDeviceMapHost") {
    conformance::use_machine("h200");
    CHECK(cudaInitDevice(0, 0, 0) == cudaSuccess);
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 0);
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags) == cudaSuccess);
    CHECK((flags & cudaDeviceMapHost) != 0);
    // Setting flags once the context exists is accepted (measured: 0).
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) == cudaSuccess);
}

TEST_CASE("cudaDeviceReset frees the device's memory and keeps the current device") {
    conformance::use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    void* buffer = nullptr;
    REQUIRE(cudaMalloc(&buffer, 1 << 20) == cudaSuccess);
    CHECK(cudaDeviceReset() == cudaSuccess);
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 2);
    CHECK(cudaFree(buffer) == cudaErrorInvalidValue);   // measured: the old pointer is gone
    cudaGetLastError();
}

TEST_CASE("a new host thread starts on device 0 whatever the main thread chose") {
    conformance::use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(5) == cudaSuccess);
    int seen = -1;
    std::thread([&] { cudaGetDevice(&seen); }).join();
    CHECK(seen == 0);
    int mine = -1;
    CHECK(cudaGetDevice(&mine) == cudaSuccess);
    CHECK(mine == 5);
}

TEST_CASE("CUDA_VISIBLE_DEVICES edge cases on one GPU answer as measured on the H200") {
    struct Row {
        const char* value;
        cudaError_t status;
        int count;
    };
    const Row rows[] = {
        {"0", cudaSuccess, 1},       {"0,1", cudaSuccess, 1},        {"0,abc", cudaSuccess, 1},
        {"0,", cudaSuccess, 1},      {" 0", cudaSuccess, 1},         {"00", cudaSuccess, 1},
        {"1", cudaErrorNoDevice, 0}, {"1,0", cudaErrorNoDevice, 0},  {"abc", cudaErrorNoDevice, 0},
        {"-1", cudaErrorNoDevice, 0}, {"GPU-", cudaErrorNoDevice, 0}, {"GPU-ffffffff", cudaErrorNoDevice, 0},
        {"MIG-x", cudaErrorNoDevice, 0}, {"0,0", cudaErrorInvalidDevice, 0},
    };
    for (const Row& row : rows) {
        CAPTURE(row.value);
        const auto [status, count] = count_under("h200", row.value);
        CHECK(status == row.status);
        if (row.status == cudaSuccess) CHECK(count == row.count);
        else CHECK(count == kUnwritten);   // the count is left unwritten on every error
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES with the device's UUID or an 8-digit UUID prefix shows it") {
    conformance::use_machine("h200");
    cudaDeviceProp properties;
    REQUIRE(cudaGetDeviceProperties(&properties, 0) == cudaSuccess);
    char uuid[64];
    const auto* b = reinterpret_cast<const unsigned char*>(properties.uuid.bytes);
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    const std::string full = uuid;
    for (const std::string& value : {full, full.substr(0, 12)}) {
        CAPTURE(value);
        const auto [status, count] = count_under("h200", value.c_str());
        CHECK(status == cudaSuccess);
        CHECK(count == 1);
    }
}

TEST_CASE("a device listed twice in CUDA_VISIBLE_DEVICES makes every call answer 101") {
    const conformance::DevicesSeen seen = conformance::devices_seen("hgx-h200-8", "3,5,3");
    CHECK(seen.count_status == cudaErrorInvalidDevice);
    CHECK(seen.count == kUnwritten);
    CHECK(seen.get_device_status == cudaErrorInvalidDevice);
}

TEST_CASE("CUDA_DEVICE_ORDER with an unknown value gives 101 and leaves the count unwritten") {
    const conformance::DevicesSeen bogus = conformance::devices_seen("h200", nullptr, "bogus");
    CHECK(bogus.count_status == cudaErrorInvalidDevice);
    CHECK(bogus.count == kUnwritten);
}

TEST_CASE("CUDA_DEVICE_ORDER=PCI_BUS_ID orders the devices by bus id") {
    const conformance::DevicesSeen by_bus = conformance::devices_seen("mixed-3", nullptr, "PCI_BUS_ID");
    REQUIRE(by_bus.count_status == cudaSuccess);
    CHECK(by_bus.devices.size() == mgpu::sim::load_machine("mixed-3").devices.size());
    int previous = -1;
    for (const conformance::DeviceSeen& device : by_bus.devices) {
        CHECK(device.pci_bus > previous);
        previous = device.pci_bus;
    }
}

// In a process of its own on real GPUs, so that no earlier case has created the context already.
// Measured the same way on the H200; the context's cost (about 527 MiB) is in cuda-facts.md.
TEST_CASE("enumeration creates no primary context; cudaSetDevice, cudaInitDevice and a thread's cudaMalloc each create one") {
    std::string story;
    if constexpr (conformance::kRealGpu) {
        conformance::use_machine("h200");
        story = conformance::answer_of_fresh_process("primary-contexts", {});
        while (!story.empty() && story.back() == '\n') story.pop_back();
    } else {
        conformance::use_machine("h200");
        story = primary_context_story();
    }
    // enumerated, set, reset, initialised, reset, a thread's cudaMalloc
    CHECK(story == "010101");
}

// Which call created each context, on eight devices: the simulator's own record, which the real
// runtime does not keep; the case above measures the same behaviour on one real GPU.
TEST_CASE("the simulator records which call created each primary context") {
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    throw conformance::CaseSkipped("the simulator's record of context creation has no real counterpart");
#else
    conformance::use_machine("hgx-h200-8");
    REQUIRE(enumerate_every_device() == cudaSuccess);
    CHECK(mgpu::sim::context_creations().empty());
    REQUIRE(cudaSetDevice(3) == cudaSuccess);
    CHECK(mgpu::sim::has_context(3));
    REQUIRE(cudaInitDevice(5, 0, 0) == cudaSuccess);
    CHECK(mgpu::sim::has_context(5));
    std::thread([] {
        void* buffer = nullptr;
        cudaMalloc(&buffer, 256);   // a new thread on device 0: its first allocation creates device 0's context
        cudaFree(buffer);
    }).join();
    const auto created = mgpu::sim::context_creations();
    REQUIRE(created.size() == 3);
    CHECK(created[0].device == 3);
    CHECK(created[0].api_name == "cudaSetDevice");
    CHECK(created[1].device == 5);
    CHECK(created[1].api_name == "cudaInitDevice");
    CHECK(created[2].device == 0);
    CHECK(created[2].api_name == "cudaMalloc");
    CHECK(created[2].host_thread != created[0].host_thread);
    CHECK(cudaDeviceReset() == cudaSuccess);   // device 3 is current
    CHECK(!mgpu::sim::has_context(3));
#endif
}
