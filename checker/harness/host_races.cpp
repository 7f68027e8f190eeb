// ThreadSanitizer's reports, taken from its runtime as they happen (host_races.h). The runtime
// calls __tsan::OnReport for every report before printing it; this definition replaces its weak
// default in the race build, keeps what a finding needs (which accesses, at which lines) and returns
// true, so that nothing is printed into the case's output. In a build without ThreadSanitizer the
// runtime's functions below are null and nothing here runs.
#include "mgpu/check/host_races.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <set>
#include <tuple>

#include "mgpu/check/harness.h"

extern "C" {
// The runtime's reporting interface (compiler-rt, tsan_debugging.cpp); weak, so that the harness
// links into builds without ThreadSanitizer too.
__attribute__((weak)) int __tsan_get_report_data(void* report, const char** description, int* count,
                                                 int* stack_count, int* mop_count, int* loc_count, int* mutex_count,
                                                 int* thread_count, int* unique_tid_count, void** sleep_trace,
                                                 unsigned long trace_size);
__attribute__((weak)) int __tsan_get_report_mop(void* report, unsigned long index, int* tid, void** address, int* size,
                                                int* write, int* atomic, void** trace, unsigned long trace_size);
__attribute__((weak)) void __sanitizer_symbolize_pc(void* pc, const char* format, char* out, std::size_t out_size);
}

namespace __tsan {
struct ReportDesc;
bool OnReport(const ReportDesc* report, bool suppressed);
}  // namespace __tsan

namespace mgpu::check {

namespace {

constexpr int kFrames = 24;
constexpr int kReports = 64;

struct RawAccess {
    void* frames[kFrames] = {};
    int write = 0;
};

struct RawRace {
    RawAccess access[2];
};

// Written from whichever thread TSan reports on, inside its runtime: no allocation, no lock that the
// runtime intercepts (this file is not instrumented, so the atomics are plain instructions).
RawRace raw_races[kReports];
std::atomic<int> raw_count{0};
std::atomic_flag writing = ATOMIC_FLAG_INIT;

// "file:line" of the first frame of `frames` in one of the student's files (inlined frames too), or of
// the first frame outside the system's headers when the student's files are not known.
std::pair<std::string, int> student_line(void* const* frames) {
    if (__sanitizer_symbolize_pc == nullptr) return {"", 0};
    const auto& sources = student_sources();
    std::pair<std::string, int> fallback{"", 0};
    for (int f = 0; f < kFrames && frames[f] != nullptr; ++f) {
        // Frames after the first hold return addresses: the call is the instruction before.
        char* pc = static_cast<char*>(frames[f]) - (f > 0 ? 1 : 0);
        char text[4096] = {};
        __sanitizer_symbolize_pc(pc, "%s:%l", text, sizeof text);
        for (const char* frame = text; *frame != '\0'; frame += std::strlen(frame) + 1) {
            const std::string place(frame);
            const auto colon = place.rfind(':');
            if (colon == std::string::npos) continue;
            const std::string file = place.substr(0, colon);
            const int line = std::atoi(place.c_str() + colon + 1);
            if (line <= 0) continue;
            for (const auto& [name, text_of_file] : sources) {
                (void)text_of_file;
                const bool same = file == name || (file.size() > name.size() && file.compare(file.size() - name.size(), name.size(), name) == 0 &&
                                                   file[file.size() - name.size() - 1] == '/');
                if (same) return {name, line};
            }
            if (fallback.first.empty() && file.rfind("/usr/", 0) != 0) fallback = {file, line};
        }
    }
    return sources.empty() ? fallback : std::pair<std::string, int>{"", 0};
}

}  // namespace

bool race_detector_active() { return __tsan_get_report_data != nullptr && __tsan_get_report_mop != nullptr; }

std::vector<HostRace> host_races() {
    std::vector<HostRace> races;
    std::set<std::tuple<std::string, int, std::string, int>> seen;
    const int count = std::min(raw_count.load(), kReports);
    for (int i = 0; i < count; ++i) {
        HostRace race;
        std::tie(race.file, race.line) = student_line(raw_races[i].access[0].frames);
        std::tie(race.other_file, race.other_line) = student_line(raw_races[i].access[1].frames);
        race.write = raw_races[i].access[0].write != 0;
        race.other_write = raw_races[i].access[1].write != 0;
        if (race.file.empty() && !race.other_file.empty()) {
            std::swap(race.file, race.other_file);
            std::swap(race.line, race.other_line);
            std::swap(race.write, race.other_write);
        }
        // Only the student's file is instrumented, so a real race has an access there; one with
        // neither in it is the runtime's own (a team's thread pool reusing memory, say).
        if (race.file.empty() && !student_sources().empty()) continue;
        if (seen.insert({race.file, race.line, race.other_file, race.other_line}).second) races.push_back(race);
    }
    return races;
}

}  // namespace mgpu::check

// Keeps every data race, prints nothing: the case that asked turns them into findings.
bool __tsan::OnReport(const ReportDesc* report, bool suppressed) {
    using namespace mgpu::check;
    if (suppressed || __tsan_get_report_data == nullptr || __tsan_get_report_mop == nullptr) return suppressed;
    void* handle = const_cast<ReportDesc*>(report);
    const char* description = nullptr;
    int count = 0, stacks = 0, mops = 0, locations = 0, mutexes = 0, threads = 0, tids = 0;
    void* sleep_trace[1] = {};
    if (__tsan_get_report_data(handle, &description, &count, &stacks, &mops, &locations, &mutexes, &threads, &tids,
                               sleep_trace, 1) == 0 ||
        description == nullptr || std::strncmp(description, "data-race", 9) != 0) {
        return false;   // not a data race (a thread leak, say): the runtime prints it as usual
    }
    while (writing.test_and_set(std::memory_order_acquire)) {
    }
    const int slot = raw_count.load();
    if (slot < kReports) {
        RawRace& race = raw_races[slot];
        for (int m = 0; m < 2 && m < mops; ++m) {
            int tid = 0, size = 0, write = 0, atomic = 0;
            void* address = nullptr;
            std::memset(race.access[m].frames, 0, sizeof race.access[m].frames);
            __tsan_get_report_mop(handle, static_cast<unsigned long>(m), &tid, &address, &size, &write, &atomic,
                                  race.access[m].frames, kFrames);
            race.access[m].write = write;
        }
        raw_count.store(slot + 1);
    }
    writing.clear(std::memory_order_release);
    return true;
}
