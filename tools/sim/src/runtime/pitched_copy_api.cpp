// Pitched (2D and 3D) memory: cudaMallocPitch, cudaMalloc3D, cudaMemcpy2D/3D and cudaMemset2D.
// A 2D copy is `height` rows of `width` bytes, each `pitch` bytes after the one before, queued and
// waited for as the 1D call of the same kind (copy_api.cpp); a 3D copy of linear memory is the 2D
// copy of its depth * height rows when both sides lay their slices out back to back (as cudaMalloc3D
// does), else one 2D copy per slice.
#include <algorithm>

#include "api_call.h"
#include "copy_plan.h"
#include "device_allocation.h"
#include "cuda_runtime_api.h"
#include "device_properties.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// cudaMallocPitch and cudaMalloc3D round rows up to a multiple of 512 bytes (an H200 gives a pitch
// of 512 for 100- and 64-byte rows), not to cudaDeviceProp::texturePitchAlignment (32).
constexpr std::size_t kPitchAlignment = 512;

std::size_t aligned_pitch(std::size_t width) { return (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment; }

// The largest pitch a copy accepts (cudaDeviceProp::memPitch).
bool pitch_too_large(std::size_t pitch) { return pitch > static_cast<std::size_t>(kMaxMemoryPitch); }

cudaError_t pitched_copy(const char* name, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async, bool per_thread_default,
                         Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("dst", dst).arg("dpitch", static_cast<long long>(dpitch)).arg("src", src);
    call.arg("spitch", static_cast<long long>(spitch)).arg("width", static_cast<long long>(width));
    call.arg("height", static_cast<long long>(height));
    if (height > 1 && (width > dpitch || width > spitch || pitch_too_large(dpitch) || pitch_too_large(spitch)))
        return call.done(cudaErrorInvalidPitchValue);
    const Rows shape{height, height > 1 ? spitch : width, height > 1 ? dpitch : width};
    return queue_memcpy(call, {name, dst, src, width, shape, kind, stream, async, per_thread_default});
}

cudaError_t pitched_memset(const char* name, void* devPtr, size_t pitch, int value, size_t width, size_t height,
                           cudaStream_t stream, bool async, bool per_thread_default, Site site) {
    ApiCall call(name, site, HostCost::MemsetKernel);
    call.arg("devPtr", devPtr).arg("pitch", static_cast<long long>(pitch)).arg("value", value);
    call.arg("width", static_cast<long long>(width)).arg("height", static_cast<long long>(height));
    // A width beyond the pitch is 1 here, where the 2D copies answer 12 (both as on an H200).
    if (height > 1 && (width > pitch || pitch_too_large(pitch))) return call.done(cudaErrorInvalidValue);
    const Rows shape{height, 0, height > 1 ? pitch : width};
    return queue_memset(call, {name, devPtr, value, width, shape, stream, async, per_thread_default});
}

cudaError_t copy_3d(const char* name, const cudaMemcpy3DParms* p, cudaStream_t stream, bool async,
                    bool per_thread_default, Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("p", p);
    if (p == nullptr) return call.done(cudaErrorInvalidValue);
    const cudaExtent& extent = p->extent;
    if (extent.width == 0 || extent.height == 0 || extent.depth == 0) return call.done(cudaSuccess);   // nothing to copy
    // CUDA arrays do not exist here, and linear memory needs both pitched pointers.
    if (p->srcArray != nullptr || p->dstArray != nullptr || p->srcPtr.ptr == nullptr || p->dstPtr.ptr == nullptr)
        return call.done(cudaErrorInvalidValue);
    const cudaPitchedPtr& from = p->srcPtr;
    const cudaPitchedPtr& to = p->dstPtr;
    if (extent.width > from.pitch || extent.width > to.pitch || pitch_too_large(from.pitch) || pitch_too_large(to.pitch))
        return call.done(cudaErrorInvalidPitchValue);
    if (extent.height > from.ysize && extent.depth > 1) return call.done(cudaErrorInvalidValue);
    if (extent.height > to.ysize && extent.depth > 1) return call.done(cudaErrorInvalidValue);
    const auto at = [](const cudaPitchedPtr& ptr, const cudaPos& pos, std::size_t z) {
        return static_cast<char*>(ptr.ptr) + (z + pos.z) * ptr.pitch * ptr.ysize + pos.y * ptr.pitch + pos.x;
    };
    const bool contiguous_slices = (extent.depth <= 1 || (from.ysize == extent.height && to.ysize == extent.height)) &&
                                   p->srcPos.y == 0 && p->dstPos.y == 0;
    if (contiguous_slices) {
        const Rows shape{extent.height * std::max<std::size_t>(extent.depth, 1), from.pitch, to.pitch};
        return queue_memcpy(call, {name, at(to, p->dstPos, 0), at(from, p->srcPos, 0), extent.width, shape, p->kind,
                                   stream, async, per_thread_default});
    }
    for (std::size_t z = 0; z < extent.depth; ++z) {
        ApiCall slice(name, site, HostCost::Copy);
        const Rows shape{extent.height, from.pitch, to.pitch};
        if (cudaError_t status = queue_memcpy(slice, {name, at(to, p->dstPos, z), at(from, p->srcPos, z), extent.width,
                                                      shape, p->kind, stream, async, per_thread_default});
            status != cudaSuccess)
            return call.done(status);
    }
    return call.done(cudaSuccess);
}

}  // namespace

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height, Site site) {
    ApiCall call("cudaMallocPitch", site);
    call.arg("width", static_cast<long long>(width)).arg("height", static_cast<long long>(height));
    if (pitch == nullptr) return call.done(cudaErrorInvalidValue);
    const std::size_t row = aligned_pitch(width);
    const cudaError_t status = allocate_device(call, devPtr, row * height);
    if (status == cudaSuccess) *pitch = row;
    return status;
}

cudaError_t cudaMalloc3D(cudaPitchedPtr* pitchedDevPtr, cudaExtent extent, Site site) {
    ApiCall call("cudaMalloc3D", site);
    call.arg("width", static_cast<long long>(extent.width)).arg("height", static_cast<long long>(extent.height));
    call.arg("depth", static_cast<long long>(extent.depth));
    if (pitchedDevPtr == nullptr) return call.done(cudaErrorInvalidValue);
    const std::size_t row = aligned_pitch(extent.width);
    void* p = nullptr;
    const cudaError_t status = allocate_device(call, &p, row * extent.height * extent.depth);
    if (status == cudaSuccess) *pitchedDevPtr = make_cudaPitchedPtr(p, row, extent.width, extent.height);
    return status;
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind, Site site) {
    return pitched_copy("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind, nullptr, false, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind kind, Site site) {
    return pitched_copy("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind, nullptr, false, true, site);
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return pitched_copy("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind, stream, true, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                        size_t height, cudaMemcpyKind kind, cudaStream_t stream, Site site) {
    return pitched_copy("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind, stream, true, true, site);
}

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p, Site site) {
    return copy_3d("cudaMemcpy3D", p, nullptr, false, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpy3D(const cudaMemcpy3DParms* p, Site site) {
    return copy_3d("cudaMemcpy3D", p, nullptr, false, true, site);
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream, Site site) {
    return copy_3d("cudaMemcpy3DAsync", p, stream, true, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream, Site site) {
    return copy_3d("cudaMemcpy3DAsync", p, stream, true, true, site);
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height, Site site) {
    return pitched_memset("cudaMemset2D", devPtr, pitch, value, width, height, nullptr, false, false, site);
}
cudaError_t mgpu_ptds_cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height, Site site) {
    return pitched_memset("cudaMemset2D", devPtr, pitch, value, width, height, nullptr, false, true, site);
}

cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream,
                              Site site) {
    return pitched_memset("cudaMemset2DAsync", devPtr, pitch, value, width, height, stream, true, false, site);
}
cudaError_t mgpu_ptds_cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                                        cudaStream_t stream, Site site) {
    return pitched_memset("cudaMemset2DAsync", devPtr, pitch, value, width, height, stream, true, true, site);
}
