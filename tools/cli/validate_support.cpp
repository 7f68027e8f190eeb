#include "validate_support.h"

#include <fstream>
#include <sstream>
#include <unistd.h>

#include "exit_codes.h"

namespace mgpu::cli {

std::string ValidateRun::visible_devices() const {
    std::string list;
    for (int device = 0; device < gpus; ++device) list += (device == 0 ? "" : ",") + std::to_string(device);
    return list;
}

Captured capture(const ValidateRun& run, const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& environment) {
    static int counter = 0;
    std::filesystem::create_directories(run.work_dir);
    const auto file = run.work_dir / ("output-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".txt");
    Captured captured;
    try {
        captured.status = run_process(argv, SpawnOptions{file, environment});
    } catch (const SetupError& error) {
        captured.started = false;
        captured.output = error.what();
        return captured;
    }
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    captured.output = text.str();
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    return captured;
}

std::string last_lines(const std::string& text, int lines) {
    std::size_t end = text.size();
    while (end > 0 && text[end - 1] == '\n') --end;
    std::size_t start = end;
    int seen = 0;
    while (start > 0) {
        if (text[start - 1] == '\n' && ++seen == lines) break;
        --start;
    }
    return text.substr(start, end - start);
}

}  // namespace mgpu::cli
