// Lesson 1, device enumeration and selection: the functions you write in devices.cu.
// The checker calls each of them on several simulated machines; do not change this file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

// Task 1 (each task is numbered the same way in devices.cu). How many devices this process can use:
// 0 when none is visible (the runtime answers 100), the device list is refused (101) or there is no
// driver (35). The runtime then answers that code to every later call, cudaGetLastError included.
int count_devices();

// What list_devices reports for one device.
struct DeviceInfo {
    int ordinal = -1;               // the device's number in this process, after CUDA_VISIBLE_DEVICES
    std::string name;               // "NVIDIA H200"
    int major = 0, minor = 0;       // compute capability
    int multiprocessors = 0;        // streaming multiprocessors (SMs)
    std::size_t total_memory = 0;   // bytes of device memory (cudaDeviceProp::totalGlobalMem)
    std::string pci_bus_id;         // as cudaDeviceGetPCIBusId writes it: "0000:1B:00.0"
    std::string uuid;               // as nvidia-smi -L prints it: "GPU-" then 8-4-4-4-12 lowercase hex digits
};

// Task 2. One record per visible device, in ordinal order; empty when there is none. Creates no context
// on any device and leaves no error behind.
std::vector<DeviceInfo> list_devices();

// Task 3. The ordinal of the visible device that `id` names, or -1 when none does. `id` is a PCI bus id
// in CUDA's spelling ("0000:1B:00.0") or nvidia-smi's ("00000000:1b:00.0"), or a full UUID
// ("GPU-2c92a301-..."); hex digits in either case. Creates no context and leaves no error behind.
int find_device(const std::string& id);

// What a program needs from the device it runs on.
struct Requirements {
    int min_major = 0, min_minor = 0;   // lowest compute capability accepted
    std::size_t min_memory = 0;         // least total device memory, in bytes
};

// Task 4. The best visible device that meets `needs`, or -1 when none does. Best means: the most total
// memory; among equals, the most SMs; among equals, the lowest PCI bus id (domain, then bus, then
// device), which names the same board however CUDA_VISIBLE_DEVICES numbers it. Creates no context and
// leaves no error behind.
int pick_device(const Requirements& needs);

// Task 5. Makes `device` current for the lifetime of the scope and gives the caller's current device back
// when the scope ends, on every path out of it. An invalid device leaves the current device as it was
// and no error behind (cudaGetLastError); status() then says why.
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

    cudaError_t status() const { return status_; }   // cudaSuccess when `device` became current

private:
    int previous_ = -1;                 // the caller's current device, to give back
    cudaError_t status_ = cudaSuccess;
};

// Task 6. Calls work(d) once for every visible device d, each call on a host thread of its own with d
// current on that thread, so that every allocation and launch of work(d) lands on device d. The threads
// may be std::threads or an OpenMP team, whose thread 0 is the calling thread itself; either way the
// caller's current device is the same afterwards. The threads run at the same time: whatever they
// share (a status to return, a list they fill) is written under a lock, or into a slot of each
// thread's own made before the threads start; the grader runs the threads under a race detector.
// Returns when every call has returned: cudaSuccess, or the first error that kept a device from
// being made current. With no device, calls nothing and returns cudaSuccess.
cudaError_t for_each_device(const std::function<void(int device)>& work);
