#include "grade.h"

#include <cstdio>
#include <exception>
#include <fstream>

#include "grading.h"
#include "reports.h"

namespace mgpu::judge {

namespace {

// Writes through a temporary file so a reader never sees half a report.
bool write_report(const std::string& path, const std::string& text, std::string* problem) {
    const std::string temporary = path + ".partial";
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << text;
        if (!file) {
            *problem = "cannot write " + path;
            return false;
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        *problem = "cannot write " + path;
        std::remove(temporary.c_str());
        return false;
    }
    return true;
}

}  // namespace

int run_grade_command(const GradeRequest& request) {
    try {
        GradeReport report = grade_submission(request);
        std::fputs(terminal_report(report, request.color, request.quiet, request.show_all).c_str(), stdout);
        std::fflush(stdout);
        int code = report.exit_code();
        std::string problem;
        if (!request.json_out.empty() && !write_report(request.json_out, gradescope_json(report), &problem)) {
            std::fprintf(stderr, "%s\n", problem.c_str());
            code = 4;
        }
        if (!request.junit_out.empty() && !write_report(request.junit_out, junit_xml(report), &problem)) {
            std::fprintf(stderr, "%s\n", problem.c_str());
            code = 4;
        }
        return code;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "The checker failed: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "The checker failed with an unknown error.\n");
    }
    return 4;
}

}  // namespace mgpu::judge
