// For the checker's tests: whether a process that should be gone is still on the machine.
#pragma once

#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace checker_tests {

// Whether any process on the machine has `marker` on its command line.
inline bool process_with_argument(const std::string& marker) {
    DIR* proc = ::opendir("/proc");
    bool found = false;
    while (dirent* entry = ::readdir(proc)) {
        std::ifstream file(std::string("/proc/") + entry->d_name + "/cmdline");
        std::string command((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        if (command.find(marker) != std::string::npos) found = true;
    }
    ::closedir(proc);
    return found;
}

// Killed processes leave /proc a moment after the kill: give them up to three seconds.
inline bool process_remains(const std::string& marker) {
    for (int attempt = 0; attempt < 60 && process_with_argument(marker); ++attempt) ::usleep(50000);
    return process_with_argument(marker);
}

}  // namespace checker_tests
