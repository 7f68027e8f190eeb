#include "memory/fault_location.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mgpu::sim::mem {

namespace {

// Lines from code the student did not write: the C++ library, and the simulator's own headers.
bool foreign_line(const char* line) {
    return std::strncmp(line, "??", 2) == 0 || std::strncmp(line, "/usr/", 5) == 0 ||
           std::strstr(line, "tools/sim/include/") != nullptr;
}

}  // namespace

std::uintptr_t faulting_instruction(const void* signal_context) {
    const auto* uc = static_cast<const ucontext_t*>(signal_context);
#if defined(__x86_64__)
    return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

bool source_line_of(std::uintptr_t instruction, char* out, std::size_t size) {
    if (instruction == 0 || size == 0) return false;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(instruction), &info) == 0 || info.dli_fbase == nullptr) return false;
    char module[4096];
    // The main program may be named as it was started (a relative path); its own file is exact.
    if (info.dli_fname == nullptr || info.dli_fname[0] != '/') {
        const ssize_t length = readlink("/proc/self/exe", module, sizeof module - 1);
        if (length <= 0) return false;
        module[length] = '\0';
    } else {
        std::snprintf(module, sizeof module, "%s", info.dli_fname);
    }
    char offset[32];
    std::snprintf(offset, sizeof offset, "0x%zx",
                  static_cast<std::size_t>(instruction - reinterpret_cast<std::uintptr_t>(info.dli_fbase)));

    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return false;
    const pid_t child = fork();
    if (child < 0) {
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        return false;
    }
    if (child == 0) {
        dup2(pipe_ends[1], STDOUT_FILENO);
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        signal(SIGSEGV, SIG_DFL);
        execlp("addr2line", "addr2line", "-i", "-e", module, offset, static_cast<char*>(nullptr));
        _exit(127);
    }
    close(pipe_ends[1]);
    char text[4096];
    std::size_t used = 0;
    for (;;) {
        const ssize_t got = read(pipe_ends[0], text + used, sizeof text - 1 - used);
        if (got > 0 && used + static_cast<std::size_t>(got) < sizeof text - 1) {
            used += static_cast<std::size_t>(got);
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        break;
    }
    close(pipe_ends[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    text[used] = '\0';
    // One line per inlined frame, innermost first: the first that is the program's own.
    for (char* line = std::strtok(text, "\n"); line != nullptr; line = std::strtok(nullptr, "\n")) {
        if (foreign_line(line)) continue;
        if (char* note = std::strstr(line, " (discriminator")) *note = '\0';
        const std::size_t length = std::strlen(line);
        if (length >= 2 && (std::strcmp(line + length - 2, ":?") == 0 || std::strcmp(line + length - 2, ":0") == 0))
            continue;   // a file without line information says nothing the student can go to
        std::snprintf(out, size, "%s", line);
        return true;
    }
    return false;
}

}  // namespace mgpu::sim::mem
