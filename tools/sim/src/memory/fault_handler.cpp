// The SIGSEGV handler behind the guard. Three kinds of fault reach it:
//  - a guarded body touching a device it may touch: open that memory and retry;
//  - a guarded body touching anything else: record the fault and go back to run_guarded;
//  - plain host code touching device memory: say which allocation it was, then die of the
//    fault as the program would on real hardware.
// Everything else belongs to whoever handled SIGSEGV before us.
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "memory/device_ranges.h"
#include "memory/fault_location.h"
#include "memory/memory.h"
#include "memory/memory_detail.h"
#include "memory/thread_guard.h"

namespace mgpu::sim::mem {
namespace {

struct sigaction previous_action {};
std::mutex installation_mutex;

enum class Access { Read, Write, Unknown };

Access access_kind(void* context) {
#if defined(__x86_64__)
    // Bit 1 of the page-fault error code the CPU pushed: the access was a write.
    const auto* uc = static_cast<const ucontext_t*>(context);
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? Access::Write : Access::Read;
#else
    (void)context;
    return Access::Unknown;
#endif
}

void write_all(const char* text, std::size_t length) {
    while (length > 0) {
        const ssize_t written = write(STDERR_FILENO, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        text += written;
        length -= static_cast<std::size_t>(written);
    }
}

void die_of_this_fault() {
    // Returning re-executes the access, which now takes the default action.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGSEGV, &default_action, nullptr);
}

// The process's last words, so snprintf's lack of signal safety costs nothing.
// Buffers the grader allocates are passed to the student's functions; its source is not the
// student's to read, so such a buffer is named by what it is instead.
bool grader_site(const char* file) { return std::strstr(file, "checker/") != nullptr; }

void report_host_access(std::uintptr_t address, int device, Access access, std::uintptr_t instruction) {
    // The process dies next: flush what the program printed so far, so that the student sees how
    // far it got. Not async-signal-safe, but the fault is in the program's own code, not in stdio.
    std::fflush(stdout);
    static char message[2048];
    const char* verb = access == Access::Write ? "wrote to" : access == Access::Read ? "read" : "dereferenced";
    const char* advice = access == Access::Write ? "fill a host buffer and copy it to the device with cudaMemcpy instead"
                         : access == Access::Read ? "copy it to the host with cudaMemcpy first"
                                                  : "move data between host and device with cudaMemcpy";
    // "near": in optimised code a load is often attributed to the line that uses its value.
    static char line[600];
    char code[640] = "host code";
    if (source_line_of(instruction, line, sizeof line)) std::snprintf(code, sizeof code, "host code near %s", line);
    Allocation allocation;
    int length = 0;
    if (detail::find_device_without_waiting(address, &allocation)) {
        char where[300] = "";
        if (allocation.site.file != nullptr && grader_site(allocation.site.file)) {
            std::snprintf(where, sizeof where, ", a buffer the grader passed to your function");
        } else if (allocation.site.file != nullptr && allocation.site.file[0] != '\0') {
            std::snprintf(where, sizeof where, " (allocated at %s:%d)", allocation.site.file, allocation.site.line);
        }
        if (allocation.symbol != nullptr) {
            // Host code named a __device__ or __constant__ variable: only kernels may use it directly.
            length = std::snprintf(message, sizeof message,
                                   "error: %s %s the device variable '%s' (declared at %s:%d), whose copy is on "
                                   "device %d. Host code cannot use a __device__ or __constant__ variable directly; "
                                   "read or write it with cudaMemcpyFromSymbol / cudaMemcpyToSymbol.\n",
                                   code, verb, allocation.symbol,
                                   allocation.site.file, allocation.site.line, device);
            if (length > 0) write_all(message, std::min<std::size_t>(static_cast<std::size_t>(length), sizeof message - 1));
            return;
        }
        length = std::snprintf(message, sizeof message,
                               "error: %s %s device memory at %p: byte %zu of a %zu-byte cudaMalloc allocation "
                               "on device %d%s. Host code cannot read or write GPU memory; %s.\n",
                               code, verb, reinterpret_cast<void*>(address),
                               static_cast<std::size_t>(address - allocation.base), allocation.size, device, where,
                               advice);
    } else {
        length = std::snprintf(message, sizeof message,
                               "error: %s %s device memory at %p: an address on device %d outside every live "
                               "cudaMalloc allocation (freed already, or past the end of one). Host code cannot read or "
                               "write GPU memory; %s.\n",
                               code, verb, reinterpret_cast<void*>(address), device, advice);
    }
    if (length > 0) write_all(message, std::min<std::size_t>(static_cast<std::size_t>(length), sizeof message - 1));
}

void pass_on(int signal_number, siginfo_t* info, void* context) {
    const struct sigaction previous = previous_action;
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
        previous.sa_sigaction(signal_number, info, context);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && info->si_code > 0) {
        previous.sa_handler(signal_number);
        return;
    }
    die_of_this_fault();
    // A sent signal does not come back by itself when we return: send it again. It stays
    // pending until this handler returns, then the default action ends the process.
    if (info->si_code <= 0) raise(signal_number);
}

void on_fault(int signal_number, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    // Sent signals (kill, raise) carry no address worth looking at.
    const bool from_an_access = info->si_code > 0;
    if (!from_an_access) {
        pass_on(signal_number, info, context);
        errno = saved_errno;
        return;
    }
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    const int owner = detail::device_at(address);
    detail::ThreadGuard* guard = detail::this_thread_guard();
    if (guard != nullptr && guard->active) {
        if (owner >= 0 && (guard->open_devices >> owner & 1) != 0) {
            if (detail::open_memory_around(*guard, owner, address)) {
                errno = saved_errno;
                return;
            }
            static const char cannot_open[] =
                "error: the simulator could not make device memory accessible (mprotect failed); "
                "the machine may be out of memory mappings.\n";
            write_all(cannot_open, sizeof cannot_open - 1);
            die_of_this_fault();
            return;
        }
        // Like a GPU, a guarded body's bad access at any address ends the body, not the
        // process: a kernel that follows a null or host pointer faults with error 700.
        guard->fault = detail::FaultRecord{address, owner, access_kind(context) == Access::Write};
        guard->active = false;
        siglongjmp(*guard->way_back, 1);
    }
    if (owner >= 0) {
        report_host_access(address, owner, access_kind(context), faulting_instruction(context));
        die_of_this_fault();
        errno = saved_errno;
        return;
    }
    pass_on(signal_number, info, context);
    errno = saved_errno;
}

}  // namespace

void install_fault_handler() {
    std::lock_guard lock(installation_mutex);
    struct sigaction current {};
    sigaction(SIGSEGV, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == on_fault) return;
    // Whoever displaced us (a test framework, a crash reporter) gets the faults we do not own.
    previous_action = current;
    struct sigaction ours {};
    ours.sa_sigaction = on_fault;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGSEGV, &ours, nullptr);
}

}  // namespace mgpu::sim::mem
