#include "validate_report.h"

#include <algorithm>
#include <iostream>

namespace mgpu::cli {

const char* verdict_label(Verdict verdict) {
    switch (verdict) {
    case Verdict::Agrees: return "AGREE";
    case Verdict::Differs: return "DIFFER";
    case Verdict::NotTestable: return "NOT TESTABLE HERE";
    case Verdict::NotBuilt: return "NOT BUILT";
    }
    return "?";
}

namespace {

// A pipe inside a cell would end the cell early in markdown.
std::string markdown_cell(const std::string& text) {
    std::string cell;
    for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    return cell;
}

}  // namespace

std::string Table::terminal() const {
    std::vector<std::size_t> widths(header.size(), 0);
    auto widen = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    };
    widen(header);
    for (const auto& row : rows) widen(row);
    auto format = [&](const std::vector<std::string>& row) {
        std::string text = " ";
        for (std::size_t i = 0; i < widths.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            text += " " + cell + std::string(widths[i] - cell.size() + 1, ' ');
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        return text + "\n";
    };
    std::string text = format(header);
    for (const auto& row : rows) text += format(row);
    return text;
}

std::string Table::markdown() const {
    std::string text = "|";
    for (const auto& cell : header) text += " " + markdown_cell(cell) + " |";
    text += "\n|";
    for (std::size_t i = 0; i < header.size(); ++i) text += "---|";
    text += "\n";
    for (const auto& row : rows) {
        text += "|";
        for (std::size_t i = 0; i < header.size(); ++i) text += " " + markdown_cell(i < row.size() ? row[i] : "") + " |";
        text += "\n";
    }
    return text;
}

void ValidationReport::print(const std::string& text) {
    if (echo_) std::cout << text << std::flush;
}

void ValidationReport::title(const std::string& text) {
    print(text + "\n");
    markdown_ << "# " << text << "\n\n";
}

void ValidationReport::section(const std::string& heading) {
    print("\n== " + heading + " ==\n");
    markdown_ << "\n## " << heading << "\n\n";
}

void ValidationReport::line(const std::string& text) {
    print(text + "\n");
    markdown_ << text << "\n\n";
}

void ValidationReport::preformatted(const std::string& text) {
    std::string body = text;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    print(body + "\n");
    markdown_ << "```\n" << body << "\n```\n\n";
}

void ValidationReport::table(const Table& rows) {
    print(rows.terminal());
    markdown_ << rows.markdown() << "\n";
}

void ValidationReport::markdown_only(const std::string& text) { markdown_ << text << "\n"; }

void ValidationReport::verdict(Verdict verdict, const std::string& what, const std::string& detail) {
    ++counts_[static_cast<int>(verdict)];
    const std::string label = verdict_label(verdict);
    print("  " + label + "  " + what + (detail.empty() ? "" : ": " + detail) + "\n");
    markdown_ << "- **" << label << "** " << what << (detail.empty() ? "" : ": " + detail) << "\n";
}

int ValidationReport::count(Verdict verdict) const { return counts_[static_cast<int>(verdict)]; }

int ValidationReport::exit_code() const { return count(Verdict::Differs) > 0 ? 1 : 0; }

std::string ValidationReport::summary_line(const std::string& machine) const {
    return std::string("validate: ") + (exit_code() == 0 ? "PASS" : "FAIL") + " - " +
           std::to_string(count(Verdict::Agrees)) + " agree, " + std::to_string(count(Verdict::Differs)) +
           " differ or miss a target, " + std::to_string(count(Verdict::NotTestable)) + " not testable here, " +
           std::to_string(count(Verdict::NotBuilt)) + " not built (" + machine + ")";
}

}  // namespace mgpu::cli
