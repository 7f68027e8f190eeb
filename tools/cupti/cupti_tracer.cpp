// The real-GPU backend's trace: CUPTI runtime-API callbacks give the call trace (name, current
// device, arguments, result, host time), CUPTI activity records give the device timeline (copies,
// memsets and kernels with GPU timestamps). Both land in the same mgpu::trace::Trace the
// simulator fills, so the checker's queries run unchanged on either backend.
#include "cupti_tracer.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace mgpu::cupti {
namespace {

using mgpu::trace::ApiCall;
using mgpu::trace::DeviceOp;
using mgpu::trace::OpKind;

struct State {
    std::mutex lock;
    mgpu::trace::Trace trace;
    Counters counters;
    std::map<std::uintptr_t, std::pair<int, std::size_t>> device_allocations;  // base -> (device, bytes)
    std::unordered_map<std::uint32_t, std::uint64_t> seq_of_correlation;
    // Calls that say which stream their work went to: those whose stream argument fill_args read,
    // and those with no stream argument, which use the legacy stream (cudaMemcpy, cudaMemset).
    std::unordered_set<std::uint64_t> stream_known;
    std::map<std::thread::id, int> thread_ids;
    std::uint64_t next_seq = 1;
    std::uint64_t next_op = 1;
    std::uint64_t gpu_epoch_ns = 0;  // CUPTI timestamp that maps to 0 us on the trace
    CUpti_SubscriberHandle subscriber{};
    bool running = false;
};

State& state() {
    static State s;
    return s;
}

thread_local int current_device = 0;

void check_cupti(CUptiResult result, const char* what) {
    if (result == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    std::fprintf(stderr, "error: CUPTI %s failed: %s\n", what, text ? text : "unknown");
    std::exit(4);
}

double now_us() {
    std::uint64_t ts = 0;
    cuptiGetTimestamp(&ts);
    return double(ts - state().gpu_epoch_ns) / 1000.0;
}

// Whether the call is the per-thread-default-stream variant (nvcc --default-stream per-thread, or
// CUDA_API_PER_THREAD_DEFAULT_STREAM): there stream 0 means the calling thread's own stream. CUPTI
// names those variants with the suffix base_name strips, so every such call is known by its name.
bool per_thread_variant(const char* function_name) {
    return function_name != nullptr &&
           (std::strstr(function_name, "_ptsz") != nullptr || std::strstr(function_name, "_ptds") != nullptr);
}

// Streams as trace ids: the legacy stream is 0, the per-thread stream 2, the others CUPTI's id + 16.
std::uint64_t stream_id(CUcontext context, cudaStream_t stream, bool per_thread_default = false) {
    if (stream == nullptr && per_thread_default) return mgpu::trace::kPerThreadStream;
    if (stream == nullptr || stream == cudaStreamLegacy) return mgpu::trace::kLegacyStream;
    if (stream == cudaStreamPerThread) return mgpu::trace::kPerThreadStream;
    std::uint32_t id = 0;
    if (context == nullptr || cuptiGetStreamIdEx(context, reinterpret_cast<CUstream>(stream), 0, &id) != CUPTI_SUCCESS)
        return 1;  // unknown but not the default stream
    return std::uint64_t(id) + 16;
}

std::string base_name(const char* name) {
    std::string n = name ? name : "";
    for (const char* suffix : {"_ptsz", "_ptds"}) {
        auto at = n.find(suffix);
        if (at != std::string::npos) n.erase(at);
    }
    auto v = n.find("_v");
    if (v != std::string::npos && v + 2 < n.size() && std::isdigit(static_cast<unsigned char>(n[v + 2]))) n.erase(v);
    return n;
}

long long ptr(const void* p) { return static_cast<long long>(reinterpret_cast<std::uintptr_t>(p)); }

// Fills the arguments of the calls the checks read, in declaration order, out-pointers omitted.
// Fills the call's arguments; returns whether it read the call's stream argument (the legacy
// stream included), that is, whether call.stream says where the call's work went.
bool fill_args(CUpti_CallbackId id, const CUpti_CallbackData* data, ApiCall& call) {
    const void* params = data->functionParams;
    CUcontext ctx = data->context;
    const bool per_thread = per_thread_variant(data->functionName);
    bool stream_read = false;
    const auto stream_of = [&](cudaStream_t stream) {
        stream_read = true;
        return stream_id(ctx, stream, per_thread);
    };
    switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020: {
        auto* p = static_cast<const cudaSetDevice_v3020_params*>(params);
        call.args = {p->device};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceCanAccessPeer_v4000: {
        auto* p = static_cast<const cudaDeviceCanAccessPeer_v4000_params*>(params);
        call.args = {p->device, p->peerDevice};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceEnablePeerAccess_v4000: {
        auto* p = static_cast<const cudaDeviceEnablePeerAccess_v4000_params*>(params);
        call.args = {p->peerDevice, p->flags};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceDisablePeerAccess_v4000: {
        auto* p = static_cast<const cudaDeviceDisablePeerAccess_v4000_params*>(params);
        call.args = {p->peerDevice};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
        auto* p = static_cast<const cudaMalloc_v3020_params*>(params);
        call.args = {static_cast<long long>(p->size)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: {
        auto* p = static_cast<const cudaFree_v3020_params*>(params);
        call.args = {ptr(p->devPtr)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000: {
        auto* p = static_cast<const cudaMemcpy_v3020_params*>(params);
        call.args = {ptr(p->dst), ptr(p->src), static_cast<long long>(p->count), p->kind};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
        auto* p = static_cast<const cudaMemcpyAsync_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->dst), ptr(p->src), static_cast<long long>(p->count), p->kind,
                     static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000: {
        auto* p = static_cast<const cudaMemcpyPeer_v4000_params*>(params);
        call.args = {ptr(p->dst), p->dstDevice, ptr(p->src), p->srcDevice, static_cast<long long>(p->count)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000: {
        auto* p = static_cast<const cudaMemcpyPeerAsync_v4000_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->dst), p->dstDevice, ptr(p->src), p->srcDevice, static_cast<long long>(p->count),
                     static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000: {
        auto* p = static_cast<const cudaMemsetAsync_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->devPtr), p->value, static_cast<long long>(p->count), static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_ptsz_v7000: {
        auto* p = static_cast<const cudaMemset2DAsync_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->devPtr), static_cast<long long>(p->pitch), p->value, static_cast<long long>(p->width),
                     static_cast<long long>(p->height), static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000: {
        auto* p = static_cast<const cudaMemcpy2DAsync_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->dst), static_cast<long long>(p->dpitch), ptr(p->src), static_cast<long long>(p->spitch),
                     static_cast<long long>(p->width), static_cast<long long>(p->height), p->kind,
                     static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
        auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z,
                     static_cast<long long>(p->sharedMem), static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000: {
        auto* p = static_cast<const cudaEventRecord_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {ptr(p->event), static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000: {
        auto* p = static_cast<const cudaStreamWaitEvent_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {static_cast<long long>(call.stream), ptr(p->event), p->flags};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000: {
        auto* p = static_cast<const cudaStreamSynchronize_v3020_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {static_cast<long long>(call.stream)};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050: {
        auto* p = static_cast<const cudaStreamDestroy_v5050_params*>(params);
        call.stream = stream_of(p->stream);
        call.args = {static_cast<long long>(call.stream)};
        break;
    }
    default:
        break;
    }
    return stream_read;
}

// Bookkeeping the cleanup checks read: live allocations, streams and events, open peer directions.
void count_effects(CUpti_CallbackId id, const CUpti_CallbackData* data, int result, State& s) {
    if (result != cudaSuccess) return;
    const void* params = data->functionParams;
    Counters& c = s.counters;
    switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
        auto* p = static_cast<const cudaMalloc_v3020_params*>(params);
        if (*p->devPtr) s.device_allocations[reinterpret_cast<std::uintptr_t>(*p->devPtr)] = {current_device, p->size};
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: {
        auto* p = static_cast<const cudaFree_v3020_params*>(params);
        s.device_allocations.erase(reinterpret_cast<std::uintptr_t>(p->devPtr));
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020: ++c.pinned_host_allocations; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020: --c.pinned_host_allocations; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostRegister_v4000: ++c.registered_host_ranges; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000: --c.registered_host_ranges; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050: ++c.streams; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050: --c.streams; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020: ++c.events; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020: --c.events; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceEnablePeerAccess_v4000: {
        auto* p = static_cast<const cudaDeviceEnablePeerAccess_v4000_params*>(params);
        c.open_directions.insert({current_device, p->peerDevice});
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceDisablePeerAccess_v4000: {
        auto* p = static_cast<const cudaDeviceDisablePeerAccess_v4000_params*>(params);
        c.open_directions.erase({current_device, p->peerDevice});
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020: {
        for (auto it = c.open_directions.begin(); it != c.open_directions.end();)
            it = it->first == current_device ? c.open_directions.erase(it) : std::next(it);
        for (auto it = s.device_allocations.begin(); it != s.device_allocations.end();)
            it = it->second.first == current_device ? s.device_allocations.erase(it) : std::next(it);
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020: {
        auto* p = static_cast<const cudaSetDevice_v3020_params*>(params);
        current_device = p->device;
        break;
    }
    default:
        break;
    }
}

// "cudaDeviceEnablePeerAccess(1, 0)": the arguments CUPTI gives, without their names; addresses
// in hex. Messages quote it where the simulator would also name each argument.
std::string call_text(const ApiCall& call) {
    std::string text = call.name + "(";
    for (std::size_t i = 0; i < call.args.size(); ++i) {
        char value[32];
        const long long arg = call.args[i];
        if (arg > (1LL << 32)) std::snprintf(value, sizeof value, "0x%llx", static_cast<unsigned long long>(arg));
        else std::snprintf(value, sizeof value, "%lld", arg);
        text += (i ? ", " : "") + std::string(value);
    }
    return text + ")";
}

// Calls in progress on this thread, innermost last. Arguments are read at entry: at exit a
// destroyed stream can no longer be asked for its id (cudaStreamDestroy's own argument).
// Calls entered and not yet returned (a stack: a runtime call may make others), each with whether
// its stream argument was read: only then does the call say which stream its work went to.
thread_local std::vector<std::pair<ApiCall, bool>> entered;

void CUPTIAPI on_runtime_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* raw) {
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    auto* data = static_cast<const CUpti_CallbackData*>(raw);
    if (data->callbackSite == CUPTI_API_ENTER) {
        ApiCall call;
        call.begin_us = now_us();
        const bool stream_read = fill_args(id, data, call);
        entered.emplace_back(std::move(call), stream_read);
        return;
    }
    if (entered.empty()) return;   // entered before the tracer started
    ApiCall call = std::move(entered.back().first);
    const bool stream_read = entered.back().second;
    entered.pop_back();
    State& s = state();
    std::lock_guard guard(s.lock);
    call.seq = s.next_seq++;
    auto [it, inserted] = s.thread_ids.try_emplace(std::this_thread::get_id(), int(s.thread_ids.size()));
    call.host_thread = it->second;
    call.name = base_name(data->functionName);
    call.device = current_device;
    call.result = data->functionReturnValue ? *static_cast<const int*>(data->functionReturnValue) : 0;
    call.end_us = now_us();
    call.text = call_text(call);
    count_effects(id, data, call.result, s);
    s.seq_of_correlation[data->correlationId] = call.seq;
    // A call with a stream argument that fill_args does not read (cudaMemcpy3DAsync, cudaLaunchHostFunc,
    // ...) leaves its work on the stream CUPTI's record names.
    const bool unread_stream = !stream_read && (call.name.find("Async") != std::string::npos ||
                                                call.name.starts_with("cudaLaunch") ||
                                                call.name.starts_with("cudaGraphLaunch"));
    if (!unread_stream) s.stream_known.insert(call.seq);
    s.trace.calls.push_back(std::move(call));
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    constexpr size_t kBytes = 1 << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
    *size = kBytes;
    *max_records = 0;
}

OpKind copy_kind(uint8_t kind, bool peer) {
    if (peer) return OpKind::MemcpyPeer;
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return OpKind::MemcpyHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return OpKind::MemcpyDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return OpKind::MemcpyHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return OpKind::MemcpyPeer;
    default: return OpKind::MemcpyDtoD;
    }
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    State& s = state();
    std::lock_guard guard(s.lock);
    CUpti_Activity* record = nullptr;
    auto to_us = [&](uint64_t ns) { return double(ns - s.gpu_epoch_ns) / 1000.0; };
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        DeviceOp op;
        op.id = s.next_op++;
        std::uint32_t correlation = 0;
        switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
            auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
            op.name = k->name ? k->name : "kernel";
            // NCCL does its collectives and send/recv in kernels of its own (ncclDevKernel_AllReduce_...,
            // and kernels for one-rank reductions): the trace shows them as the collectives they are,
            // as the simulator does.
            // CUPTI gives the name mangled or not, depending on the kernel.
            const bool nccl_kernel = op.name.find("ncclDevKernel") != std::string::npos ||
                                     op.name.find("ncclKernel") != std::string::npos || op.name.starts_with("nccl") ||
                                     // one rank: a reduction kernel in NCCL's own onerank.cu
                                     op.name.find("oneRankReduce") != std::string::npos;
            op.kind = nccl_kernel ? OpKind::Collective : OpKind::Kernel;
            op.device = int(k->deviceId);
            op.engine = "compute";
            op.start_us = to_us(k->start);
            op.end_us = to_us(k->end);
            op.threads = 1ull * k->gridX * k->gridY * k->gridZ * k->blockX * k->blockY * k->blockZ;
            op.stream = std::uint64_t(k->streamId) + 16;
            correlation = k->correlationId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
            op.kind = copy_kind(m->copyKind, false);
            op.name = "memcpy";
            op.device = int(m->deviceId);
            op.src_device = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? -1 : int(m->deviceId);
            op.dst_device = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? -1 : int(m->deviceId);
            op.bytes = m->bytes;
            op.pinned_host = m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
            op.engine = "copy";
            op.start_us = to_us(m->start);
            op.end_us = to_us(m->end);
            op.stream = std::uint64_t(m->streamId) + 16;
            correlation = m->correlationId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            auto* m = reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(record);
            op.kind = OpKind::MemcpyPeer;
            op.name = "memcpy-peer";
            op.device = int(m->deviceId);
            op.src_device = int(m->srcDeviceId);
            op.dst_device = int(m->dstDeviceId);
            op.bytes = m->bytes;
            op.engine = "link";
            op.start_us = to_us(m->start);
            op.end_us = to_us(m->end);
            op.stream = std::uint64_t(m->streamId) + 16;
            correlation = m->correlationId;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
            op.kind = OpKind::Memset;
            op.name = "memset";
            op.device = int(m->deviceId);
            op.bytes = m->bytes;
            op.engine = "compute";
            op.start_us = to_us(m->start);
            op.end_us = to_us(m->end);
            op.stream = std::uint64_t(m->streamId) + 16;
            correlation = m->correlationId;
            break;
        }
        default:
            continue;
        }
        auto seq = s.seq_of_correlation.find(correlation);
        if (seq != s.seq_of_correlation.end()) {
            op.api_seq = seq->second;
            // The call knows whether it used the legacy stream; activity ids do not say so.
            const std::size_t index = s.trace.calls.empty() ? 0 : seq->second - s.trace.calls.front().seq;
            if (index < s.trace.calls.size()) {
                const ApiCall& call = s.trace.calls[index];
                if (s.stream_known.contains(call.seq) &&
                    (call.stream == mgpu::trace::kLegacyStream || call.stream == mgpu::trace::kPerThreadStream))
                    op.stream = call.stream;
            }
        }
        s.trace.ops.push_back(std::move(op));
    }
    std::free(buffer);
}

}  // namespace

void start() {
    State& s = state();
    if (s.running) return;
    check_cupti(cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed), "activity callbacks");
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET})
        check_cupti(cuptiActivityEnable(kind), "activity enable");
    check_cupti(cuptiSubscribe(&s.subscriber, on_runtime_call, nullptr), "subscribe");
    check_cupti(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "runtime callbacks");
    cuptiGetTimestamp(&s.gpu_epoch_ns);
    s.running = true;
}

void flush() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

const mgpu::trace::Trace& trace() {
    flush();
    return state().trace;
}

void clear() {
    flush();
    State& s = state();
    std::lock_guard guard(s.lock);
    s.trace.clear();
    s.seq_of_correlation.clear();
    s.stream_known.clear();
    cuptiGetTimestamp(&s.gpu_epoch_ns);
}

const Counters& counters() { return state().counters; }

void reset_counters() {
    State& s = state();
    std::lock_guard guard(s.lock);
    s.counters = Counters{};
    s.device_allocations.clear();
}

std::size_t device_bytes_in_use(int device) {
    State& s = state();
    std::lock_guard guard(s.lock);
    std::size_t total = 0;
    for (auto& [base, alloc] : s.device_allocations)
        if (alloc.first == device) total += alloc.second;
    return total;
}

std::size_t live_device_allocations(int device) {
    State& s = state();
    std::lock_guard guard(s.lock);
    std::size_t count = 0;
    for (auto& [base, alloc] : s.device_allocations) count += alloc.first == device;
    return count;
}

double host_now_us() { return now_us(); }

}  // namespace mgpu::cupti
