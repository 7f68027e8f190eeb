// The trace of one run: every runtime API call and every device operation with its
// modelled (simulator) or measured (CUPTI) start and end. Both backends fill the same
// structures, so the checker's queries do not depend on where the code ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mgpu::trace {

// Stream ids as the trace records them.
inline constexpr std::uint64_t kLegacyStream = 0;     // the legacy default stream (0 / cudaStreamLegacy)
inline constexpr std::uint64_t kPerThreadStream = 2;  // cudaStreamPerThread; real streams get ids >= 16

struct ApiCall {
    std::uint64_t seq = 0;         // order of the call in the process, from 1
    int host_thread = 0;           // small id of the calling host thread, 0 = first thread seen
    std::string name;              // "cudaDeviceEnablePeerAccess"
    int device = -1;               // the calling thread's current device when the call was made
    std::vector<long long> args;   // the arguments in declaration order: ints, sizes, enums, pointers as
                                   // addresses, streams and events as trace ids; out-pointers are omitted
    std::string text;              // human-readable form: "cudaDeviceEnablePeerAccess(peerDevice=1, flags=0)"
    int result = 0;                // the cudaError_t (or ncclResult_t) returned
    double begin_us = 0;           // host time at entry and exit (virtual in the simulator)
    double end_us = 0;
    std::string file;              // where the call was written ("" when unknown, e.g. under CUPTI)
    int line = 0;
    std::uint64_t stream = kLegacyStream;  // the stream the call enqueues work on, when it takes one
    std::string reason;            // why a failed call failed, where the library says (NCCL's last error); "" else
};

enum class OpKind {
    Kernel,
    MemcpyHtoD,
    MemcpyDtoH,
    MemcpyDtoD,   // both ends on the same device
    MemcpyPeer,   // ends on two devices (cudaMemcpyPeer*, or cudaMemcpy* with cudaMemcpyDefault / DtoD across devices)
    MemcpyHtoH,
    Memset,
    EventRecord,
    StreamWait,   // cudaStreamWaitEvent
    Collective,   // NCCL
    HostFunction, // cudaLaunchHostFunc, cudaStreamAddCallback
};

const char* to_string(OpKind kind);

// Bytes an operation reads or writes: exact for copies and memsets; for a kernel, each pointer
// argument from where it points over as many elements as the launch covers, clipped to its
// allocation (what the runtime can know without watching every access).
struct MemoryRange {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;        // one past the last byte
    bool write = false;            // kernels: a pointer to non-const is taken to be written
    // Which allocation the bytes belonged to then (device memory: its serial; 0 for host memory):
    // an address freed and allocated again is other memory, whatever the clocks of the threads say.
    std::uint64_t allocation = 0;
};

struct DeviceOp {
    std::uint64_t id = 0;
    OpKind kind = OpKind::Kernel;
    std::string name;              // kernel name, or the API name that enqueued it
    int device = -1;               // device whose engine ran it (for peer copies: the destination device)
    int src_device = -1;           // for copies: where the bytes came from (-1 = host)
    int dst_device = -1;           // for copies: where they went (-1 = host)
    std::uint64_t stream = kLegacyStream;
    std::string engine;            // "compute", "copy-h2d", "copy-d2h", "copy-d2d", "link 0->1", "staged 0->1"
    double start_us = 0;           // on the device timeline
    double end_us = 0;
    std::size_t bytes = 0;         // bytes moved (copies, memset) or 0
    bool pinned_host = false;      // a host end was page-locked memory
    bool staged = false;           // peer copy without P2P: went through host memory
    bool peer_access = false;      // a kernel that dereferenced memory of another device via peer access
    std::uint64_t api_seq = 0;     // the ApiCall that enqueued it
    unsigned long long threads = 0;  // kernels: grid x block
    int error = 0;                 // a kernel that faulted: the code it raised (700, 719)
    std::vector<MemoryRange> touches;   // simulator only; empty under CUPTI
};

struct Trace {
    std::vector<ApiCall> calls;
    std::vector<DeviceOp> ops;

    void clear() { calls.clear(); ops.clear(); }

    std::vector<const ApiCall*> calls_named(const std::string& name) const;
    std::vector<const DeviceOp*> ops_of(OpKind kind) const;
    std::vector<const DeviceOp*> ops_on_stream(std::uint64_t stream) const;

    // Chrome trace event JSON (times in microseconds; a process per device, a track per stream).
    std::string to_chrome_json() const;
};

// Whether two intervals overlap by more than `min_us`.
bool overlaps(const DeviceOp& a, const DeviceOp& b, double min_us = 0.0);

}  // namespace mgpu::trace
