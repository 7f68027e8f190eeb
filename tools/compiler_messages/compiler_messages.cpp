#include "compiler_messages.h"

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "api_signatures.h"
#include "message_text.h"
#include "source_columns.h"

namespace mgpu::messages {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<std::string> file_lines(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return lines_of(text.str());
}

struct Location {
    std::string file;
    int line = 0;
    int column = 0;   // 0: none
};

std::string format(const Location& where) {
    std::string text = where.file;
    if (where.line > 0) text += ":" + std::to_string(where.line);
    if (where.line > 0 && where.column > 0) text += ":" + std::to_string(where.column);
    return text;
}

// A source line quoted the way g++ quotes it.
std::string quoted(int number, const std::string& text) {
    std::string digits = std::to_string(number);
    return std::string(digits.size() < 5 ? 5 - digits.size() : 0, ' ') + digits + " | " + text;
}

class Rewriter {
public:
    explicit Rewriter(const CompileContext& context) : context_(context) {
        if (!context.api_headers.empty()) signatures_ = api_signatures(context.api_headers);
    }

    std::string run(const std::string& output) {
        for (const auto& line : lines_of(output)) take(line);
        quote_missing();
        flush_context();
        std::string text;
        for (const auto& line : out_) text += line + "\n";
        return text;
    }

private:
    enum class Quotes { Keep, Drop, Recaret };

    void take(const std::string& line) {
        static const std::regex quote(R"(^ *[0-9]* \|( .*)?$)");
        static const std::regex included(R"(^(In file included from|\s+from) (.*?)(:\d+)*[:,]$)");
        static const std::regex diagnostic(R"(^(.*?):(\d+):(?:(\d+):)? (error|warning|note|fatal error): (.*)$)");
        static const std::regex nested_context(R"(^(.*?):(\d+):(\d+):   (required|in |recursively|  ).*$)");
        static const std::regex scope_context(R"(^([^ :][^:]*): (In|At) .*:$)");
        std::smatch match;
        const bool is_quote = std::regex_match(line, quote);
        if (!is_quote) quote_missing();
        pending_quote_.reset();
        if (is_quote) return take_quote(line);
        if (std::regex_match(line, match, included)) {
            chain_.push_back({line, internal(match[2].str())});
            return;
        }
        if (std::regex_match(line, match, diagnostic)) {
            Location where{match[1].str(), std::stoi(match[2].str()), match[3].matched ? std::stoi(match[3].str()) : 0};
            return take_diagnostic(where, match[4].str(), match[5].str());
        }
        if (std::regex_match(line, match, nested_context)) {
            const std::string file = match[1].str();
            const bool simulator = internal(file) || !student(file);
            if (!simulator) last_student_ = Location{file, std::stoi(match[2].str()), 0};
            context_lines_.push_back({line, simulator || mentions_simulator(line)});
            return;
        }
        if (std::regex_match(line, match, scope_context)) {
            const std::string file = match[1].str();
            context_lines_.push_back({without_simulator_names(line).text, internal(file) || mentions_simulator(line)});
            return;
        }
        flush_context();
        quotes_ = Quotes::Keep;
        out_.push_back(without_simulator_names(line).text);
    }

    void take_quote(const std::string& line) {
        if (quotes_ == Quotes::Drop) return;
        if (quotes_ == Quotes::Keep) {
            out_.push_back(line);
            return;
        }
        // A column moved or lost by the rewriting: the quoted line as written, with a plain caret.
        const bool numbered = line.find_first_of("0123456789") < line.find('|');
        if (numbered) {
            out_.push_back(line);
        } else if (!caret_done_) {
            caret_done_ = true;
            if (caret_column_ > 0) out_.push_back("      | " + std::string(caret_column_ - 1, ' ') + "^");
        }
    }

    void take_diagnostic(Location where, const std::string& severity, std::string message) {
        const bool from_simulator = internal(where.file);
        flush_context(!from_simulator);
        if (severity != "note" || message.starts_with("candidate:") || message.starts_with("candidate 1:")) {
            hidden_before_ = 0;
            hidden_after_ = 0;
        }
        const bool own_file = !from_simulator && student(where.file);
        if (own_file) place_column(where);
        // Decided on the compiler's own words, before the simulator's names are taken out.
        message = too_many_arguments(message, where);
        MessageText text = without_simulator_names(message, hidden_before_, hidden_after_);
        hidden_before_ = text.hidden_before;
        hidden_after_ = text.hidden_after;
        message = text.text;

        if (from_simulator) {
            quotes_ = Quotes::Drop;
            if (severity == "note") {
                // Where the simulator declares something: the note matters only for what it says
                // (a candidate's signature), so it names the CUDA header, not the simulator's file.
                if (message == "declared here" || message.starts_with("in expansion of macro") ||
                    message.starts_with("in definition of macro") || mentions_simulator(message))
                    return;
                // A kernel's own declaration stands behind the launcher: the student's, so the note
                // goes with the launch.
                if ((hidden_before_ > 0 || message.find("<<<") != std::string::npos) && last_student_) {
                    Location at = *last_student_;
                    at.column = 0;
                    out_.push_back(format(at) + ": note: " + message);
                    return;
                }
                out_.push_back(public_header(where.file) + ": note: " + message);
                return;
            }
            // An error inside the simulator's templates: it is the student's call that caused it.
            if (last_student_) {
                Location at = *last_student_;
                at.column = 0;
                out_.push_back(format(at) + ": " + severity + ": " + message);
                const auto source = student_line(at.file, at.line);
                if (source) out_.push_back(quoted(at.line, *source));
            } else {
                out_.push_back(public_header(where.file) + ": " + severity + ": " + message);
            }
            return;
        }

        if (own_file) {
            last_student_ = where;
            pending_quote_ = where;
        } else {
            quotes_ = Quotes::Keep;
        }
        out_.push_back(format(where) + ": " + severity + ": " + message);
    }

    // The compiler quotes the line it complains about when it can open the file by the name #line
    // gives it; where it could not (the checker compiles a copy elsewhere), the line is quoted here.
    void quote_missing() {
        if (!pending_quote_) return;
        const Location where = *pending_quote_;
        pending_quote_.reset();
        const auto source = student_line(where.file, where.line);
        if (!source) return;
        out_.push_back(quoted(where.line, *source));
        if (where.column > 0) out_.push_back("      | " + std::string(where.column - 1, ' ') + "^");
    }

    // The column on a line cu2cpp rewrote, mapped back to the line as written (or dropped).
    void place_column(Location& where) {
        quotes_ = Quotes::Keep;
        const StudentFile* file = find(where.file);
        if (file == nullptr || file->rewritten.empty() || where.column == 0) return;
        const auto original = cached_line(file->original, where.line);
        // cu2cpp's output starts with a few lines of its own before `#line 1`.
        const auto rewritten = rewritten_line(*file, where.line);
        if (!original || !rewritten || *original == *rewritten) return;
        const auto column = original_column(*original, *rewritten, where.column);
        where.column = column.value_or(0);
        quotes_ = Quotes::Recaret;
        caret_column_ = where.column;
        caret_done_ = false;
    }

    // "could not convert '1' from 'int' to 'mgpu::sim::Site'": one argument more than the CUDA
    // function takes reached the hidden parameter.
    std::string too_many_arguments(const std::string& message, const Location& where) {
        static const std::regex hidden(R"(^could not convert .* to \S*(mgpu::sim::Site|std::source_location)\S*$)");
        if (!std::regex_match(message, hidden)) return message;
        const auto source = student_line(where.file, where.line);
        std::string name;
        if (source && where.column > 0 && static_cast<std::size_t>(where.column) <= source->size()) {
            // The function whose '(' is still open at the column of the extra argument.
            int depth = 0;
            for (int i = where.column - 1; i >= 0; --i) {
                const char c = (*source)[i];
                if (c == ')') ++depth;
                if (c == '(' && depth-- == 0) {
                    int end = i;
                    while (end > 0 && (*source)[end - 1] == ' ') --end;
                    int start = end;
                    while (start > 0 && (std::isalnum(static_cast<unsigned char>((*source)[start - 1])) || (*source)[start - 1] == '_'))
                        --start;
                    name = source->substr(start, end - start);
                    break;
                }
            }
        }
        // The quotation marks the compiler uses in this locale (typographic ones in UTF-8).
        const bool typographic = message.find("\xE2\x80\x98") != std::string::npos;
        const std::string open = typographic ? "\xE2\x80\x98" : "'", close = typographic ? "\xE2\x80\x99" : "'";
        const auto signature = signatures_.find(name);
        if (signature != signatures_.end()) return "too many arguments to function " + open + signature->second + close;
        if (!name.empty()) return "too many arguments to function " + open + name + close;
        return "too many arguments in function call";
    }

    // The include chain and the instantiation context before a diagnostic: shown as g++ shows them
    // when they are all the student's own, left out when they pass through the simulator.
    void flush_context(bool keep_chain = false) {
        bool chain_ok = keep_chain;
        for (const auto& entry : chain_) chain_ok = chain_ok && !entry.simulator;
        if (chain_ok)
            for (const auto& entry : chain_) out_.push_back(entry.text);
        chain_.clear();
        bool group_ok = true;
        for (const auto& entry : context_lines_)
            if (entry.text.find(": In ") == std::string::npos && entry.text.find(": At ") == std::string::npos)
                group_ok = group_ok && !entry.simulator;
        for (const auto& entry : context_lines_) {
            const bool scope = entry.text.find(": In ") != std::string::npos || entry.text.find(": At ") != std::string::npos;
            if (scope ? (!entry.simulator && group_ok) : group_ok) out_.push_back(entry.text);
        }
        context_lines_.clear();
    }

    bool internal(const std::string& file) const {
        if (file == "<command-line>" || file == "<built-in>") return true;
        if (find(file) != nullptr) return false;   // a student's file, wherever it is
        const fs::path path(file);
        // A path relative to the kit (the simulator's headers named from the kit's root).
        if (!path.is_absolute()) return file.starts_with("tools/") || file.starts_with("build/");
        const std::string text = path.lexically_normal().string();
        for (const auto& folder : context_.internal_folders) {
            std::string prefix = folder.lexically_normal().string();
            if (!prefix.empty() && prefix.back() != '/') prefix += '/';
            if (text.starts_with(prefix)) return true;
        }
        return false;
    }

    // Not the simulator's and not the system's: a file the student (or their course) wrote.
    bool student(const std::string& file) const {
        if (internal(file)) return false;
        return !file.starts_with("/usr/");
    }

    static bool mentions_simulator(const std::string& text) {
        return text.find("mgpu::") != std::string::npos || text.find("mgpu_") != std::string::npos ||
               text.find("Site") != std::string::npos;
    }

    // The CUDA header a declaration of the simulator stands for: its own name when it is one of
    // the headers with CUDA's names, else cuda_runtime.h, which includes the rest.
    std::string public_header(const std::string& file) const {
        const fs::path path(file);
        if (!context_.api_headers.empty() && path.parent_path().lexically_normal() == context_.api_headers.lexically_normal())
            return path.filename().string();
        return "cuda_runtime.h";
    }

    const StudentFile* find(const std::string& shown) const {
        for (const auto& file : context_.files)
            if (file.shown == shown) return &file;
        return nullptr;
    }

    std::optional<std::string> cached_line(const fs::path& path, int number) {
        auto it = files_.find(path.string());
        if (it == files_.end()) it = files_.emplace(path.string(), file_lines(path)).first;
        if (number < 1 || static_cast<std::size_t>(number) > it->second.size()) return std::nullopt;
        return it->second[number - 1];
    }

    std::optional<std::string> rewritten_line(const StudentFile& file, int number) {
        auto it = files_.find(file.rewritten.string());
        if (it == files_.end()) {
            std::vector<std::string> lines = file_lines(file.rewritten);
            // Everything up to cu2cpp's `#line 1` is its own preamble.
            for (std::size_t i = 0; i < lines.size(); ++i)
                if (lines[i].starts_with("#line 1 ")) {
                    lines.erase(lines.begin(), lines.begin() + static_cast<long>(i) + 1);
                    break;
                }
            it = files_.emplace(file.rewritten.string(), std::move(lines)).first;
        }
        if (number < 1 || static_cast<std::size_t>(number) > it->second.size()) return std::nullopt;
        return it->second[number - 1];
    }

    // A line of a student's file as they wrote it.
    std::optional<std::string> student_line(const std::string& shown, int number) {
        const StudentFile* file = find(shown);
        return cached_line(file ? file->original : fs::path(shown), number);
    }

    struct ContextLine {
        std::string text;
        bool simulator;
    };

    const CompileContext& context_;
    std::map<std::string, std::string> signatures_;
    std::map<std::string, std::vector<std::string>> files_;
    std::vector<std::string> out_;
    std::vector<ContextLine> chain_;
    std::vector<ContextLine> context_lines_;
    std::optional<Location> last_student_;
    std::optional<Location> pending_quote_;   // a student's diagnostic whose quoted line may not follow
    Quotes quotes_ = Quotes::Keep;
    int caret_column_ = 0;
    bool caret_done_ = false;
    int hidden_before_ = 0;
    int hidden_after_ = 0;
};

}  // namespace

std::string nvcc_style_messages(const std::string& compiler_output, const CompileContext& context) {
    return Rewriter(context).run(compiler_output);
}

}  // namespace mgpu::messages
