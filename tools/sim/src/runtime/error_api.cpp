// cudaGetLastError, cudaPeekAtLastError and the names and messages of the error codes, as
// the CUDA 13 runtime prints them.
#include "api_call.h"
#include "cuda_runtime_api.h"

namespace {

struct ErrorText {
    cudaError_t code;
    const char* name;
    const char* message;
};

constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer", "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver",
     "API call is not supported in the installed CUDA driver"},
    {cudaErrorDevicesUnavailable, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable"},
    {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration", "__global__ function call is not configured"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorStartupFailure, "cudaErrorStartupFailure", "startup failure in cuda runtime"},
    {cudaErrorInvalidKernelImage, "cudaErrorInvalidKernelImage", "device kernel image is invalid"},
    {cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
     "no kernel image is available for execution on the device"},
    {cudaErrorPeerAccessUnsupported, "cudaErrorPeerAccessUnsupported",
     "peer access is not supported between these two devices"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {cudaErrorSetOnActiveProcess, "cudaErrorSetOnActiveProcess", "cannot set while device is active in this process"},
    {cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed", "context is destroyed"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorTooManyPeers, "cudaErrorTooManyPeers", "peer mapping resources exhausted"},
    {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
     "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
     "pointer does not correspond to a registered memory region"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* find_error(cudaError_t code) {
    for (const ErrorText& entry : kErrors)
        if (entry.code == code) return &entry;
    return nullptr;
}

constexpr const char* kUnrecognised = "unrecognized error code";

}  // namespace

using mgpu::sim::rt::ApiCall;

// A runtime without a device to offer never finishes starting, and asking for the last error tries
// again. Measured with the CUDA 13.0 runtime: without a driver (35), with CUDA_VISIBLE_DEVICES empty or
// its first entry invalid (100), with a device listed twice or CUDA_DEVICE_ORDER=bogus (101),
// cudaGetLastError and cudaPeekAtLastError answer that code every time, from the first call on, and
// reading it does not clear it.
cudaError_t cudaGetLastError(mgpu::sim::Site site) {
    ApiCall call("cudaGetLastError", site);
    if (cudaError_t status = mgpu::sim::rt::machine_status(); status != cudaSuccess) return call.done_without_error(status);
    cudaError_t& stored = mgpu::sim::rt::last_error();
    const cudaError_t result = stored;
    stored = cudaSuccess;
    return call.done_without_error(result);
}

cudaError_t cudaPeekAtLastError(mgpu::sim::Site site) {
    ApiCall call("cudaPeekAtLastError", site);
    if (cudaError_t status = mgpu::sim::rt::machine_status(); status != cudaSuccess) return call.done_without_error(status);
    return call.done_without_error(mgpu::sim::rt::last_error());
}

const char* cudaGetErrorName(cudaError_t error, mgpu::sim::Site site) {
    ApiCall call("cudaGetErrorName", site);
    call.arg("error", static_cast<long long>(error));
    const ErrorText* entry = find_error(error);
    call.done_without_error(cudaSuccess);
    return entry ? entry->name : kUnrecognised;
}

const char* cudaGetErrorString(cudaError_t error, mgpu::sim::Site site) {
    ApiCall call("cudaGetErrorString", site);
    call.arg("error", static_cast<long long>(error));
    const ErrorText* entry = find_error(error);
    call.done_without_error(cudaSuccess);
    return entry ? entry->message : kUnrecognised;
}
