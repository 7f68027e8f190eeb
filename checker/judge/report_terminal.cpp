#include <algorithm>
#include <cstdio>
#include <vector>
#include <sstream>

#include "columns.h"
#include "reports.h"
#include "translate.h"

namespace mgpu::judge {

namespace {

constexpr std::size_t kFindingsShownPerCase = 4;
// A skeleton fails every check; the first few of a criterion say what to do, the rest repeat it.
constexpr int kCasesShownPerCriterion = 4;

struct Style {
    bool color;
    std::string red(const std::string& text) const { return color ? "\033[31m" + text + "\033[0m" : text; }
    std::string green(const std::string& text) const { return color ? "\033[32m" + text + "\033[0m" : text; }
    std::string yellow(const std::string& text) const { return color ? "\033[33m" + text + "\033[0m" : text; }
    std::string bold(const std::string& text) const { return color ? "\033[1m" + text + "\033[0m" : text; }
};

// Criterion names may be translated, so the table pads by terminal columns rather than bytes.
std::string pad(const std::string& text, std::size_t width) {
    const std::string padded = pad_to_columns(text, width);
    return padded.size() > text.size() ? padded : text + " ";
}

std::string indent(const std::string& text, const std::string& prefix) {
    std::istringstream lines(text);
    std::string line, result;
    while (std::getline(lines, line)) result += prefix + line + "\n";
    return result;
}

std::string short_name(const CaseResult& test) {
    std::string name = test.name.substr(test.criterion.size() + (test.name.size() > test.criterion.size() ? 2 : 0));
    return name.empty() ? test.name : name;
}

std::string read_hint(const LessonResult& lesson, const Criterion& criterion) {
    if (lesson.lesson_text.empty() || criterion.section.empty()) return "";
    // The Japanese catalog turns README.md into README.ja.md, the lesson's text in Japanese.
    std::string text = lesson.lesson_text;
    if (text.size() >= 9 && text.compare(text.size() - 9, 9, "README.md") == 0) text = text.substr(0, text.size() - 9) + tr("README.md");
    std::string hint = fill(tr("read {} section {}"), text, criterion.section);
    if (!criterion.section_title.empty()) hint += " (" + tr(criterion.section_title) + ")";
    return hint;
}

// A case that failed with nothing but wrong values (no finding names a cause, no crash or limit).
bool symptoms_only(const CaseResult& test) {
    if (test.status != CaseStatus::Failed || test.findings.empty()) return false;
    for (const auto& finding : test.findings) {
        if (!finding.symptom) return false;
    }
    return true;
}

void write_case(std::ostringstream& out, const LessonResult& lesson, const CaseResult& test, const Style& style,
                bool all) {
    out << "  " << style.red("x") << " " << printable(short_name(test));
    if (!test.scenario.empty()) out << "  [" << printable(test.scenario) << "]";
    out << "\n";
    if (!test.reason.empty()) out << "      " << style.red(printable(test.reason)) << "\n";
    std::size_t shown = 0;
    for (const auto& finding : test.findings) {
        if (!all && shown++ == kFindingsShownPerCase) {
            out << "      " << fill(tr("({} more of the same case not shown)"), test.findings.size() - kFindingsShownPerCase) << "\n";
            break;
        }
        out << "      " << printable(finding.check) << "\n";
        out << "        expected: " << printable(finding.expected) << "\n";
        out << "        observed: " << printable(finding.observed) << "\n";
        if (!finding.file.empty()) {
            out << "        at:       " << printable(finding.file) << ":" << finding.line << "\n";
        }
        if (!finding.scenario.empty() && finding.scenario != test.scenario) {
            out << "        scenario: " << printable(finding.scenario) << "\n";
        }
        if (!finding.section.empty() && !lesson.lesson_text.empty()) {
            out << "        read:     " << printable(lesson.lesson_text) << " section " << printable(finding.section)
                << "\n";
        }
    }
    if (!test.timeline_file.empty())
        out << "      timeline: " << printable(test.timeline_file) << " (open it in a web browser: what ran on each GPU, and when)\n";
    if (!test.output_tail.empty() && test.status != CaseStatus::Failed) {
        // Fenced, each line behind "| ": what the student's code printed can never pass for the
        // kit's own lines (a fake "Score 100 / 100" just above the real one).
        static const std::string rule = "        +" + std::string(60, '-') + "\n";
        out << "      " << tr("last output of the program (printed by your code, not by the grader):") << "\n"
            << rule << indent(printable(test.output_tail), "        | ") << rule;
    }
}

void write_lesson(std::ostringstream& out, const LessonResult& lesson, const Style& style, bool all) {
    out << style.bold(fill(tr("Lesson {}: {}"), lesson.number, tr(lesson.title)));
    std::string files;
    for (const auto& file : lesson.submission_files) files += (files.empty() ? "" : ", ") + file;
    out << "  (" << printable(files) << ")\n";

    if (lesson.outcome != LessonOutcome::Graded) {
        const bool kit = lesson.outcome == LessonOutcome::KitFault;
        out << "  " << style.red(kit ? tr("The checker itself failed") : tr("Could not be built")) << " ("
            << lesson.problem_kind << "): " << fill(tr("score 0 / {}"), format_points(lesson.max_score)) << "\n\n";
        out << indent(printable(lesson.problem), "  ") << "\n";
        out << "  " << (kit ? tr("This is a fault of the kit, not of your code: please report it with the text above.")
                            : tr("Fix the first problem above and run the check again."))
            << "\n";
        return;
    }

    out << "\n  " << pad(tr("criterion"), 24) << pad(tr("points"), 16) << tr("checks") << "\n";
    for (const auto& criterion : lesson.criteria) {
        std::string points = format_points(criterion.earned) + " / " + format_points(criterion.max);
        std::string checks = fill(tr("{} of {} passed"), criterion.passed, criterion.passed + criterion.failed);
        if (criterion.skipped > 0) checks += fill(tr(", {} skipped"), criterion.skipped);
        if (criterion.unfinished > 0) checks += fill(tr(", {} not finished"), criterion.unfinished);
        std::string row = "  " + pad(tr(criterion.criterion.name), 24) + pad(points, 16) + checks;
        out << (criterion.failed > 0 ? style.red(row) : style.green(row)) << "\n";
    }
    out << "  " << pad(tr("total"), 24) << format_points(lesson.score) << " / " << format_points(lesson.max_score) << "\n";

    bool any_failed = false;
    for (const auto& criterion : lesson.criteria) {
        if (criterion.failed == 0) continue;
        if (!any_failed) out << "\n" << style.bold(tr("What to fix")) << "\n";
        any_failed = true;
        out << style.bold(tr(criterion.criterion.name)) << ": "
            << fill(tr(criterion.passed + criterion.failed == 1 ? N_("{} of {} check failed") : N_("{} of {} checks failed")),
                    criterion.failed, criterion.passed + criterion.failed);
        std::string hint = read_hint(lesson, criterion.criterion);
        out << (hint.empty() ? "" : "; " + hint) << "\n";
        // The cases whose findings name a cause first: they say what to change.
        std::vector<const CaseResult*> failed;
        for (const auto& test : lesson.cases) {
            if (test.criterion == criterion.criterion.name && counts_as_failed(test.status)) failed.push_back(&test);
        }
        std::stable_partition(failed.begin(), failed.end(), [](const CaseResult* test) { return !symptoms_only(*test); });
        int shown = 0;
        for (const CaseResult* test : failed) {
            if (all || shown < kCasesShownPerCriterion) write_case(out, lesson, *test, style, all);
            ++shown;
        }
        if (!all && shown > kCasesShownPerCriterion) {
            out << "  "
                << fill(tr("({} more failed checks of this criterion: fix the ones above first, or show them all with --all)"),
                        shown - kCasesShownPerCriterion)
                << "\n";
        }
    }
    bool any_skipped = false;
    for (const auto& test : lesson.cases) {
        if (test.status != CaseStatus::Skipped) continue;
        if (!any_skipped) out << "\n" << style.bold(tr("Skipped (neither passed nor failed)")) << "\n";
        any_skipped = true;
        out << "  " << style.yellow("-") << " " << printable(test.name) << ": " << printable(test.reason) << "\n";
    }
    bool any_unfinished = false;
    for (const auto& test : lesson.cases) {
        if (test.status != CaseStatus::Unfinished) continue;
        if (!any_unfinished) {
            out << "\n" << style.bold(tr("Not finished: no verdict, no fault of your code (grade again)")) << "\n";
        }
        any_unfinished = true;
        out << "  " << style.yellow("?") << " " << printable(test.name) << ": " << printable(test.reason) << "\n";
    }
}

}  // namespace

std::string format_points(double points) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", points + 1e-9);
    std::string result = text;
    if (result.size() > 2 && result.compare(result.size() - 2, 2, ".0") == 0) result.resize(result.size() - 2);
    return result;
}

std::string totals_line(const GradeReport& report) {
    std::string line = std::to_string(report.cases_passed()) + " passed, " + std::to_string(report.cases_failed()) +
                       " failed";
    if (report.cases_skipped() > 0) line += ", " + std::to_string(report.cases_skipped()) + " skipped";
    if (report.cases_unfinished() > 0) line += ", " + std::to_string(report.cases_unfinished()) + " not finished";
    return line;
}

std::string terminal_report(const GradeReport& report, bool color, bool quiet, bool all) {
    Style style{color};
    std::ostringstream out;
    if (!report.kit_fault.empty()) {
        out << style.red(tr("The checker could not run: ")) << printable(report.kit_fault) << "\n";
        return out.str();
    }
    if (!quiet) {
        for (const auto& lesson : report.lessons) {
            write_lesson(out, lesson, style, all);
            out << "\n";
        }
        // watch_screen.cpp finds this line by its first word.
        out << tr("Score") << " " << format_points(report.score()) << " / " << format_points(report.max_score()) << "  "
            << fill(tr("(seed {}; repeat this run with --seed {})"), report.seed, report.seed) << "\n";
        // With --all, also how the submission was isolated: for the grader, who must know what held.
        if (all && !report.sandbox.empty()) out << "Sandbox: " << printable(report.sandbox) << "\n";
    } else {
        for (const auto& lesson : report.lessons) {
            out << "Lesson " << lesson.number << ": " << format_points(lesson.score) << " / "
                << format_points(lesson.max_score);
            if (lesson.outcome != LessonOutcome::Graded) out << " (" << lesson.problem_kind << ")";
            out << "\n";
        }
    }
    out << totals_line(report) << "\n";
    return out.str();
}

std::string printable(const std::string& text) {
    std::string result;
    result.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) result += static_cast<char>(c);
            else if (c != '\r') result += '?';
            ++i;
            continue;
        }
        int length = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool valid = length > 0 && i + length <= text.size();
        for (int k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
        // C1 control characters (U+0080..U+009F) can start terminal sequences too.
        if (valid && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) valid = false;
        if (valid) {
            result.append(text, i, length);
            i += length;
        } else {
            result += '?';
            ++i;
        }
    }
    return result;
}

}  // namespace mgpu::judge
