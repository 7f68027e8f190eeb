// run_guarded: device memory opens lazily, chunk by chunk, for the devices a body may touch,
// and closes again when the body ends. The opening itself happens in the fault handler.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "memory/device_ranges.h"
#include "memory/memory.h"
#include "memory/memory_detail.h"
#include "memory/thread_guard.h"

namespace mgpu::sim::mem {
namespace detail {
namespace {

// A sweep that keeps running into the end of what it opened gets twice as much each time, so
// touching N bytes in order costs about log2(N / 2 MiB) faults instead of N / 2 MiB.
constexpr std::size_t kLargestOpeningStep = std::size_t{1} << 30;

std::atomic<std::uint64_t> openings{0};

thread_local ThreadGuard* current_guard __attribute__((tls_model("initial-exec"))) = nullptr;

std::size_t alternate_stack_bytes() {
    const long minimum = sysconf(_SC_MINSIGSTKSZ);
    return std::max<std::size_t>(std::size_t{64} << 10, minimum > 0 ? 4 * static_cast<std::size_t>(minimum) : 0);
}

// Owns the per-thread guard and the alternate signal stack: the handler must not run on a
// fiber's small stack, and when the thread's own stack is what overflowed it has none.
struct GuardOwner {
    ThreadGuard* guard = nullptr;
    char* stack_mapping = nullptr;
    std::size_t stack_mapping_bytes = 0;

    ThreadGuard& get() {
        if (guard == nullptr) {
            guard = new ThreadGuard();
            current_guard = guard;
        }
        return *guard;
    }

    void ensure_alternate_stack() {
        stack_t current{};
        if (sigaltstack(nullptr, &current) != 0) return;
        if ((current.ss_flags & SS_DISABLE) == 0) return;   // one is in place already: use it
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        if (stack_mapping == nullptr) {
            // One inaccessible page below the stack turns an overflow into a plain crash.
            const std::size_t bytes = alternate_stack_bytes() + page;
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            mprotect(p, page, PROT_NONE);
            stack_mapping = static_cast<char*>(p);
            stack_mapping_bytes = bytes;
        }
        stack_t ours{};
        ours.ss_sp = stack_mapping + page;
        ours.ss_size = stack_mapping_bytes - page;
        ours.ss_flags = 0;
        sigaltstack(&ours, nullptr);
    }

    ~GuardOwner() {
        current_guard = nullptr;
        delete guard;
        if (stack_mapping != nullptr) {
            stack_t current{};
            if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0 &&
                static_cast<char*>(current.ss_sp) > stack_mapping &&
                static_cast<char*>(current.ss_sp) < stack_mapping + stack_mapping_bytes) {
                stack_t off{};
                off.ss_flags = SS_DISABLE;
                sigaltstack(&off, nullptr);
            }
            munmap(stack_mapping, stack_mapping_bytes);
        }
    }
};

thread_local GuardOwner guard_owner;

bool protect(std::uintptr_t begin, std::uintptr_t end, int protection) {
    if (end <= begin) return true;
    return mprotect(reinterpret_cast<void*>(begin), end - begin, protection) == 0;
}

void close_everything(ThreadGuard& guard) {
    for (std::size_t i = 0; i < guard.span_count; ++i) {
        protect(guard.spans[i].begin, guard.spans[i].end, PROT_NONE);
    }
    guard.span_count = 0;
    for (int d = 0; guard.wholly_open_devices != 0 && d < kMaxDevices; ++d) {
        if ((guard.wholly_open_devices >> d & 1) == 0) continue;
        const DeviceRange range = device_range(d);
        protect(range.begin, range.end, PROT_NONE);
    }
    guard.wholly_open_devices = 0;
}

struct GuardFrame {
    bool active;
    std::uint64_t open_devices;
    sigjmp_buf* way_back;
};

void leave(ThreadGuard& guard, const GuardFrame& outer) {
    guard.active = false;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    close_everything(guard);
    guard.open_devices = outer.open_devices;
    guard.way_back = outer.way_back;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    guard.active = outer.active;
}

}  // namespace

ThreadGuard* this_thread_guard() { return current_guard; }

void count_opening() { openings.fetch_add(1, std::memory_order_relaxed); }

bool open_memory_around(ThreadGuard& guard, int device, std::uintptr_t address) {
    const DeviceRange range = device_range(device);
    const std::uintptr_t chunk_begin = std::max(address / kChunkBytes * kChunkBytes, range.begin);
    const std::uintptr_t chunk_end = std::min(chunk_begin + kChunkBytes, range.end);
    count_opening();
    for (std::size_t i = 0; i < guard.span_count; ++i) {
        OpenSpan& span = guard.spans[i];
        if (span.device != device) continue;
        if (address >= span.begin && address < span.end) {
            // Opened before, and closed since by another thread's guarded body ending.
            return protect(chunk_begin, chunk_end, PROT_READ | PROT_WRITE);
        }
        const std::size_t step = std::clamp<std::size_t>(span.end - span.begin, kChunkBytes, kLargestOpeningStep);
        if (span.end == chunk_begin) {
            const std::uintptr_t new_end = std::min(span.end + step, range.end);
            if (!protect(span.end, new_end, PROT_READ | PROT_WRITE)) return false;
            span.end = new_end;
            return true;
        }
        if (span.begin == chunk_end) {
            const std::uintptr_t new_begin = span.begin - std::min<std::size_t>(step, span.begin - range.begin);
            if (!protect(new_begin, span.begin, PROT_READ | PROT_WRITE)) return false;
            span.begin = new_begin;
            return true;
        }
    }
    if (guard.span_count < kOpenSpanCapacity) {
        if (!protect(chunk_begin, chunk_end, PROT_READ | PROT_WRITE)) return false;
        guard.spans[guard.span_count] = OpenSpan{chunk_begin, chunk_end, device};
        ++guard.span_count;
        return true;
    }
    guard.wholly_open_devices |= std::uint64_t{1} << device;
    return protect(range.begin, range.end, PROT_READ | PROT_WRITE);
}

void reset_guard_statistics() { openings.store(0, std::memory_order_relaxed); }

void prepare_guard_for_this_thread() {
    install_fault_handler();
    guard_owner.get();
    guard_owner.ensure_alternate_stack();
}

}  // namespace detail

bool run_guarded(std::uint64_t open_devices, const std::function<void()>& body, Violation* violation) {
    detail::prepare_guard_for_this_thread();
    detail::ThreadGuard& guard = detail::guard_owner.get();
    const detail::GuardFrame outer{guard.active, guard.open_devices, guard.way_back};
    // An enclosing body may have opened devices this one must not reach.
    guard.active = false;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    detail::close_everything(guard);

    sigjmp_buf way_back;
    guard.way_back = &way_back;
    guard.open_devices = open_devices;
    // The signal mask is not saved here (that would cost a system call on every body); the
    // one signal the handler blocks is unblocked below when it comes back this way.
    if (sigsetjmp(way_back, 0) == 0) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        guard.active = true;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        try {
            body();
        } catch (...) {
            detail::leave(guard, outer);
            throw;
        }
        detail::leave(guard, outer);
        return true;
    }

    sigset_t segv;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    pthread_sigmask(SIG_UNBLOCK, &segv, nullptr);
    const detail::FaultRecord fault = guard.fault;
    detail::leave(guard, outer);
    if (violation != nullptr) {
        violation->address = reinterpret_cast<const void*>(fault.address);
        violation->owner_device = fault.owner_device;
        violation->write = fault.write;
        violation->allocation = fault.owner_device >= 0 ? find_device(violation->address) : std::nullopt;
    }
    return false;
}

std::uint64_t guard_openings() { return detail::openings.load(std::memory_order_relaxed); }

}  // namespace mgpu::sim::mem
