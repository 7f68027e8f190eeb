#include "watch_screen.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "translate.h"

namespace mgpu::cli {

std::string first_screen(const std::string& report, int lesson) {
    std::istringstream in(report);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    // The report is check's, in the same language as this process (watch passes its choice on).
    auto fix = std::find(lines.begin(), lines.end(), tr("What to fix"));
    if (fix == lines.end()) return report;
    std::string screen;
    for (auto line = lines.begin(); line != fix; ++line) screen += *line + "\n";
    auto is_case = [](const std::string& line) { return line.rfind("  x ", 0) == 0; };
    auto first_case = std::find_if(fix, lines.end(), is_case);
    if (first_case == lines.end()) return report;
    screen += tr("What to fix first") + std::string("\n");
    if (first_case - 1 != fix) screen += *(first_case - 1) + "\n";  // the criterion and the section to read
    screen += *first_case + "\n";
    for (auto line = first_case + 1; line != lines.end() && line->rfind("  ", 0) == 0 && !is_case(*line); ++line)
        screen += *line + "\n";
    screen += fill(tr("(tools/mgpu check {} shows every failed check)"), lesson) + "\n\n";
    for (const std::string& line : lines)
        if (line.rfind(tr("Score") + std::string(" "), 0) == 0) screen += line + "\n";
    return screen;
}

}  // namespace mgpu::cli
