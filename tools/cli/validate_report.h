// What `validate` found, part by part: printed as it goes, in the user's language, and kept in
// English for the markdown report (--out FILE.md, a record). Every check ends in one verdict; the
// verdicts decide the exit code and the summary line, which is English on the terminal too
// (scripts read it).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "report_words.h"

namespace mgpu::cli {

enum class Verdict {
    Agrees,       // measured and modelled agree, or a target is met
    Differs,      // a difference or a missed target
    NotTestable,  // this machine cannot run it (too few GPUs, ...): counts neither way
    NotBuilt,     // the program it needs is not part of this build: counts neither way
};

const char* verdict_label(Verdict verdict);  // "AGREE", "DIFFER", "NOT TESTABLE HERE", "NOT BUILT"

// Rows of text cells, printed aligned on the terminal and as a markdown table.
struct Table {
    std::vector<Words> header;
    std::vector<std::vector<Words>> rows;

    std::string terminal() const;
    std::string markdown() const;
};

class ValidationReport {
public:
    explicit ValidationReport(bool echo = true) : echo_(echo) {}

    void title(const Words& text);
    void section(const Words& heading);
    void line(const Words& text);                   // a paragraph line, both outputs
    void preformatted(const Words& text);           // command output: a code block in markdown
    void table(const Table& rows);
    void markdown_only(const std::string& text);
    void terminal_only(const std::string& text) { print(text); }    // already markdown, and already printed another way
    void verdict(Verdict verdict, const Words& what, const Words& detail);

    int count(Verdict verdict) const;
    // 0 when nothing differs, 1 otherwise (callers handle "cannot run at all" themselves).
    int exit_code() const;
    // One line: the overall result and the count of each verdict, e.g.
    // "validate: PASS - 12 agree, 0 differ or miss a target, 3 not testable here, 0 not built (...)".
    std::string summary_line(const std::string& machine) const;
    std::string markdown() const { return markdown_.str(); }

private:
    void print(const std::string& text);
    bool echo_;
    std::ostringstream markdown_;
    int counts_[4] = {0, 0, 0, 0};
};

}  // namespace mgpu::cli
