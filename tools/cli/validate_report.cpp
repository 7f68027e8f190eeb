#include "validate_report.h"

#include <algorithm>
#include <iostream>

#include "columns.h"
#include "translate.h"

namespace mgpu::cli {

const char* verdict_label(Verdict verdict) {
    switch (verdict) {
    case Verdict::Agrees: return N_("AGREE");
    case Verdict::Differs: return N_("DIFFER");
    case Verdict::NotTestable: return N_("NOT TESTABLE HERE");
    case Verdict::NotBuilt: return N_("NOT BUILT");
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
    auto widen = [&](const std::vector<Words>& row) {
        for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], columns_of(row[i].shown));
    };
    widen(header);
    for (const auto& row : rows) widen(row);
    auto format = [&](const std::vector<Words>& row) {
        std::string text = " ";
        for (std::size_t i = 0; i < widths.size(); ++i)
            text += " " + pad_to_columns(i < row.size() ? row[i].shown : "", widths[i] + 1);
        while (!text.empty() && text.back() == ' ') text.pop_back();
        return text + "\n";
    };
    std::string text = format(header);
    for (const auto& row : rows) text += format(row);
    return text;
}

std::string Table::markdown() const {
    std::string text = "|";
    for (const auto& cell : header) text += " " + markdown_cell(cell.english) + " |";
    text += "\n|";
    for (std::size_t i = 0; i < header.size(); ++i) text += "---|";
    text += "\n";
    for (const auto& row : rows) {
        text += "|";
        for (std::size_t i = 0; i < header.size(); ++i) text += " " + markdown_cell(i < row.size() ? row[i].english : "") + " |";
        text += "\n";
    }
    return text;
}

void ValidationReport::print(const std::string& text) {
    if (echo_) std::cout << text << std::flush;
}

void ValidationReport::title(const Words& text) {
    print(text.shown + "\n");
    markdown_ << "# " << text.english << "\n\n";
}

void ValidationReport::section(const Words& heading) {
    print("\n== " + heading.shown + " ==\n");
    markdown_ << "\n## " << heading.english << "\n\n";
}

void ValidationReport::line(const Words& text) {
    print(text.shown + "\n");
    markdown_ << text.english << "\n\n";
}

void ValidationReport::preformatted(const Words& text) {
    auto trimmed = [](std::string body) {
        while (!body.empty() && body.back() == '\n') body.pop_back();
        return body;
    };
    print(trimmed(text.shown) + "\n");
    markdown_ << "```\n" << trimmed(text.english) << "\n```\n\n";
}

void ValidationReport::table(const Table& rows) {
    print(rows.terminal());
    markdown_ << rows.markdown() << "\n";
}

void ValidationReport::markdown_only(const std::string& text) { markdown_ << text << "\n"; }

void ValidationReport::verdict(Verdict verdict, const Words& what, const Words& detail) {
    ++counts_[static_cast<int>(verdict)];
    const char* label = verdict_label(verdict);
    print("  " + std::string(tr(label)) + "  " + what.shown + (detail.empty() ? "" : ": " + detail.shown) + "\n");
    markdown_ << "- **" << label << "** " << what.english << (detail.empty() ? "" : ": " + detail.english) << "\n";
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
