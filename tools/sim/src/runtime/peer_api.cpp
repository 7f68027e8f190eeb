// Peer access between devices (the "Peer access" rows of cuda-facts.md).
#include "api_call.h"
#include "cuda_runtime_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice, Site site) {
    ApiCall call("cudaDeviceCanAccessPeer", site);
    call.arg("device", device).arg("peerDevice", peerDevice);
    // Answers even for a faulted context: it asks the topology, not the context.
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (!valid_device(device) || !valid_device(peerDevice)) return call.done(cudaErrorInvalidDevice);
    // Measured on the H200 (CUDA 13.0, driver 580), as the first call of a process and after the
    // runtime has started: 1, with the device ids checked first. Older runtimes crashed here.
    if (canAccessPeer == nullptr) return call.done(cudaErrorInvalidValue);
    *canAccessPeer = can_peer(device, peerDevice) ? 1 : 0;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags, Site site) {
    ApiCall call("cudaDeviceEnablePeerAccess", site);
    call.arg("peerDevice", peerDevice).arg("flags", flags);
    Runtime& r = runtime();
    ++r.enable_calls;
    if (flags != 0) return call.done(cudaErrorInvalidValue);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (!valid_device(peerDevice)) return call.done(cudaErrorInvalidDevice);
    if (peerDevice == r.options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    // The hardware answers 217 where the runtime header promises 101 (cuda-facts.md).
    if (!can_peer(device, peerDevice)) return call.done(cudaErrorPeerAccessUnsupported);
    if (r.options.faults.enable_gives_711_at == r.enable_calls) return call.done(cudaErrorTooManyPeers);
    std::vector<bool>::reference enabled = r.devices[device].peer_enabled[peerDevice];
    if (enabled) return call.done(cudaErrorPeerAccessAlreadyEnabled);
    enabled = true;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice, Site site) {
    ApiCall call("cudaDeviceDisablePeerAccess", site);
    call.arg("peerDevice", peerDevice);
    Runtime& r = runtime();
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (!valid_device(peerDevice)) return call.done(cudaErrorInvalidDevice);
    if (peerDevice == device || !r.devices[device].peer_enabled[peerDevice])
        return call.done(cudaErrorPeerAccessNotEnabled);
    r.devices[device].peer_enabled[peerDevice] = false;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int srcDevice, int dstDevice, Site site) {
    ApiCall call("cudaDeviceGetP2PAttribute", site);
    call.arg("attr", static_cast<long long>(attr)).arg("srcDevice", srcDevice).arg("dstDevice", dstDevice);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (value == nullptr) return call.done(cudaErrorInvalidValue);
    if (!valid_device(srcDevice) || !valid_device(dstDevice) || srcDevice == dstDevice)
        return call.done(cudaErrorInvalidDevice);
    const bool peers = can_peer(srcDevice, dstDevice);
    const mgpu::sim::LinkSpec& link = runtime().machine.links[srcDevice][dstDevice];
    switch (attr) {
    case cudaDevP2PAttrPerformanceRank: *value = peers ? link.perf_rank : 0; break;
    case cudaDevP2PAttrAccessSupported: *value = peers ? 1 : 0; break;
    case cudaDevP2PAttrNativeAtomicSupported: *value = peers && link.native_atomics ? 1 : 0; break;
    case cudaDevP2PAttrCudaArrayAccessSupported: *value = peers ? 1 : 0; break;
    case cudaDevP2PAttrOnlyPartialNativeAtomicSupported: *value = 0; break;
    default: return call.done(cudaErrorInvalidValue);
    }
    return call.done(cudaSuccess);
}
