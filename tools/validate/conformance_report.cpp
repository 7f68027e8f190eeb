#include "conformance_report.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace mgpu::validate {

namespace {

std::string padded(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::size_t program_width(const Comparison& comparison) {
    std::size_t width = std::string("PROGRAM").size();
    for (const auto* rows : {&comparison.differing, &comparison.skipped, &comparison.partly_skipped})
        for (const auto& row : *rows) width = std::max(width, row.program.size());
    return width;
}

std::string upper_case(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

// A table cell: '|' would end the cell and a line break the row.
std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n' || c == '\r') out += ' ';
        else out += c;
    }
    return out;
}

std::string joined_cell(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += (out.empty() ? "" : "<br>") + cell(line);
    return out;
}

}  // namespace

std::string summary_line(const Comparison& comparison) {
    std::ostringstream line;
    line << "conformance: " << comparison.compared << " cases compared, " << comparison.differing.size() << " differ, "
         << comparison.skipped.size() << " skipped on the real machine";
    return line.str();
}

std::string format_text(const Comparison& comparison, const std::string& real_side) {
    std::ostringstream out;
    const std::size_t width = program_width(comparison);
    const std::size_t outcome_width = std::max<std::size_t>(12, real_side.size() + 2);
    if (comparison.differing.empty()) {
        out << "No test case differs between the simulator and the " << real_side << ".\n";
    } else {
        out << "Test cases whose result differs between the simulator and the " << real_side << ":\n";
        out << "  " << padded("PROGRAM", width) << "  " << padded("SIMULATOR", outcome_width)
            << padded(upper_case(real_side), outcome_width) << "TEST CASE\n";
        for (const auto& row : comparison.differing) {
            out << "  " << padded(row.program, width) << "  " << padded(to_string(row.simulator), outcome_width)
                << padded(to_string(row.real), outcome_width) << row.case_name << "\n";
            for (const auto& detail : row.details) out << "  " << std::string(width, ' ') << "    " << detail << "\n";
        }
    }
    if (!comparison.skipped.empty()) {
        out << "\nSkipped on the real machine (not compared):\n";
        out << "  " << padded("PROGRAM", width) << "  TEST CASE / REASON\n";
        for (const auto& row : comparison.skipped) {
            out << "  " << padded(row.program, width) << "  " << row.case_name << "\n";
            for (const auto& reason : row.details) out << "  " << std::string(width, ' ') << "    " << reason << "\n";
        }
    }
    if (!comparison.partly_skipped.empty()) {
        out << "\nCompared on some of their presets only:\n";
        for (const auto& row : comparison.partly_skipped) {
            out << "  " << padded(row.program, width) << "  " << row.case_name << "\n";
            for (const auto& reason : row.details) out << "  " << std::string(width, ' ') << "    " << reason << "\n";
        }
    }
    if (!comparison.program_problems.empty()) {
        out << "\nPrograms that did not run to their end:\n";
        for (const auto& problem : comparison.program_problems) out << "  " << problem << "\n";
    }
    out << "\n" << summary_line(comparison) << "\n";
    return out.str();
}

std::string format_markdown(const Comparison& comparison, const std::string& real_side) {
    std::ostringstream out;
    out << "## Conformance: the simulator against the " << real_side << "\n\n";
    if (comparison.differing.empty()) {
        out << "No test case differs between the simulator and the " << real_side << ".\n";
    } else {
        out << "### Test cases whose result differs\n\n";
        out << "| Program | Test case | Simulator | " << cell(real_side) << " | What failed |\n";
        out << "|---|---|---|---|---|\n";
        for (const auto& row : comparison.differing)
            out << "| " << cell(row.program) << " | " << cell(row.case_name) << " | " << to_string(row.simulator) << " | "
                << to_string(row.real) << " | " << joined_cell(row.details) << " |\n";
    }
    if (!comparison.skipped.empty()) {
        out << "\n### Skipped on the real machine (not compared)\n\n";
        out << "| Program | Test case | Reason |\n|---|---|---|\n";
        for (const auto& row : comparison.skipped)
            out << "| " << cell(row.program) << " | " << cell(row.case_name) << " | " << joined_cell(row.details) << " |\n";
    }
    if (!comparison.partly_skipped.empty()) {
        out << "\n### Compared on some of their presets only\n\n";
        out << "| Program | Test case | Skipped presets |\n|---|---|---|\n";
        for (const auto& row : comparison.partly_skipped)
            out << "| " << cell(row.program) << " | " << cell(row.case_name) << " | " << joined_cell(row.details) << " |\n";
    }
    if (!comparison.program_problems.empty()) {
        out << "\n### Programs that did not run to their end\n\n";
        for (const auto& problem : comparison.program_problems) out << "- " << cell(problem) << "\n";
    }
    out << "\n`" << summary_line(comparison) << "`\n";
    return out.str();
}

}  // namespace mgpu::validate
