// What `run` adds after a program's own output: the simulator's report of what the run left
// behind (leaked streams, events and memory, device work nobody waited for, data races between
// streams), in words a student can act on, each pointing at the line that caused it.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace mgpu::cli {

// Lesson sections that teach the fix, by finding kind ("race", "stream", "event", "memory",
// "unfinished"); empty for a program that is not a lesson's.
using FindingSections = std::map<std::string, std::string>;

struct RunFindings {
    int count = 0;        // problems found; 0 when the report is clean or missing
    std::string text;     // what to print, one block per problem
};

// Reads the report the simulator wrote at exit (MGPU_RUN_REPORT). A missing file (the program
// crashed or called _exit) gives no findings.
RunFindings read_run_findings(const std::filesystem::path& report, const FindingSections& sections, int lesson);

}  // namespace mgpu::cli
