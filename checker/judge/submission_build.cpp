#include "submission_build.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include "compiler_messages.h"
#include "object_inspection.h"
#include "process_runner.h"
#include "sha256.h"

namespace mgpu::judge {

namespace fs = std::filesystem;

constexpr const char* kRaceBinary = "checker-races";

namespace {

// Part of every cache key: change it whenever what a build does or checks changes, so that no
// build made under older rules is reused.
constexpr const char* kCacheFormat = "mgpu-checker-build-v5";
constexpr std::size_t kCacheEntriesKept = 48;

std::string read_file(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file) throw KitError("cannot write " + path.string());
}

// Name, size and modification time of a file, or of every file under a folder: enough to notice
// a rebuilt library or an edited header without reading them.
void add_fingerprint(seal::Sha256& hash, const fs::path& path) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
        std::vector<fs::path> files;
        for (auto it = fs::recursive_directory_iterator(path, error); !error && it != fs::recursive_directory_iterator();
             it.increment(error)) {
            if (it->is_regular_file(error)) files.push_back(it->path());
        }
        std::sort(files.begin(), files.end());
        for (const auto& file : files) add_fingerprint(hash, file);
        return;
    }
    auto size = fs::file_size(path, error);
    auto time = fs::last_write_time(path, error);
    hash.update(path.string());
    hash.update(error ? std::string("|absent|")
                      : "|" + std::to_string(size) + "|" + std::to_string(time.time_since_epoch().count()) + "|");
}

// A C++ file defining student_sources.cpp's symbols: each file's name and text, NUL-terminated.
std::string embedded_sources(const std::vector<SubmissionFile>& files) {
    std::string bytes;
    for (const auto& file : files) {
        bytes += file.display;
        bytes += '\0';
        bytes += read_file(file.path);
        bytes += '\0';
    }
    std::string out = "extern \"C\" {\nextern const char mgpu_student_sources[] = {";
    static const char* digits = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const auto byte = static_cast<unsigned char>(bytes[i]);
        out += i % 24 == 0 ? "\n" : "";
        out += "'\\x";
        out += digits[byte >> 4];
        out += digits[byte & 15];
        out += "',";
    }
    out += "0};\nextern const unsigned long mgpu_student_sources_size = " + std::to_string(bytes.size()) + "ul;\n}\n";
    return out;
}

std::string cache_key(const Lesson& lesson, const LessonBuild& build, const std::vector<SubmissionFile>& files) {
    seal::Sha256 hash;
    hash.update(kCacheFormat);
    hash.update(lesson.id);
    hash.update(build.manifest_text);
    for (const auto& file : files) {
        hash.update("|file|" + file.name + "|" + file.display + "|");
        hash.update(read_file(file.path));
    }
    // The interface a cached build was checked against: a changed header or lesson.json checks it anew.
    for (const auto& signature : lesson.interface) hash.update("|interface|" + signature);
    for (const auto& dir : build.include_dirs) add_fingerprint(hash, dir);
    add_fingerprint(hash, lesson.exercise_dir);
    for (const auto& archive : build.link_archives) add_fingerprint(hash, archive);
    if (!build.cu2cpp.empty()) add_fingerprint(hash, build.cu2cpp);
    if (!build.prelude.empty()) add_fingerprint(hash, build.prelude + ".gch");
    if (!build.nvcc.empty()) add_fingerprint(hash, build.nvcc.front());
    return hash.hex_digest().substr(0, 32);
}

std::vector<std::string> tool_environment() {
    return {"PATH=" + judge_path_variable(), "LC_ALL=C", "LANG=C", "HOME=/tmp", "TMPDIR=/tmp"};
}

ProcessOutcome run_tool(std::vector<std::string> argv, const BuildSettings& settings, const std::string& workspace,
                        bool hide_checker, double cpu_seconds = 180) {
    ProcessSpec spec;
    SandboxView view;
    view.readable_paths = settings.readable_paths;
    view.toolchain_dirs = settings.toolchain_dirs;
    if (hide_checker) {
        view.hidden_dirs = settings.hidden_dirs;
        view.hidden_again = settings.hidden_again;
    }
    view.writable_dirs = {workspace};
    spec.argv = settings.sandbox ? settings.sandbox->prefix(view) : std::vector<std::string>{};
    spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
    spec.environment = tool_environment();
    spec.working_dir = workspace;
    spec.limits.cpu_seconds = cpu_seconds;
    spec.limits.blocked_seconds = 60;
    spec.limits.output_bytes = std::size_t{16} << 20;
    spec.limits.kept_output_bytes = std::size_t{96} << 10;
    spec.limits.file_size_bytes = std::size_t{1} << 30;
    return run_process(spec);
}

bool succeeded(const ProcessOutcome& outcome) { return outcome.started && outcome.exited && outcome.exit_code == 0; }

// The names the C and C++ runtime libraries export: a student's global variable must not take one.
const std::vector<std::string>& system_symbols(const std::vector<std::string>& cxx) {
    static std::once_flag once;
    static std::vector<std::string> names;
    std::call_once(once, [&] {
        for (const char* library : {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"}) {
            ProcessSpec locate;
            locate.argv = cxx;
            locate.argv.push_back(std::string("-print-file-name=") + library);
            locate.environment = tool_environment();
            ProcessOutcome where = run_process(locate);
            std::string path = where.output.substr(0, where.output.find('\n'));
            if (!succeeded(where) || path.find('/') == std::string::npos) continue;
            ProcessSpec list;
            list.argv = {"nm", "-D", "--defined-only", path};
            list.environment = tool_environment();
            list.limits.kept_output_bytes = std::size_t{8} << 20;
            list.limits.output_bytes = std::size_t{32} << 20;
            ProcessOutcome symbols = run_process(list);
            std::istringstream lines(symbols.output);
            std::string line;
            while (std::getline(lines, line)) {
                std::string name = line.substr(line.rfind(' ') + 1);
                name = name.substr(0, name.find('@'));
                if (!name.empty()) names.push_back(name);
            }
        }
    });
    return names;
}

std::string new_workspace(const std::string& cache_dir) {
    static std::atomic<int> counter{0};
    fs::path dir = fs::path(cache_dir) /
                   ("work-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)));
    std::error_code error;
    fs::remove_all(dir, error);
    fs::create_directories(dir, error);
    if (error) throw KitError("cannot create the build folder " + dir.string() + ": " + error.message());
    return dir.string();
}

void prune_cache(const std::string& cache_dir) {
    std::vector<std::pair<fs::file_time_type, fs::path>> entries;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(cache_dir, error)) {
        if (entry.is_directory(error) && entry.path().filename().string().rfind("work-", 0) != 0) {
            entries.emplace_back(fs::last_write_time(entry.path(), error), entry.path());
        }
    }
    if (entries.size() <= kCacheEntriesKept) return;
    std::sort(entries.begin(), entries.end());
    for (std::size_t i = 0; i + kCacheEntriesKept < entries.size(); ++i) fs::remove_all(entries[i].second, error);
}

BuiltChecker not_built(std::string kind, std::string problem) {
    BuiltChecker result;
    result.problem_kind = std::move(kind);
    result.problem = std::move(problem);
    return result;
}

std::string explain_outcome(const ProcessOutcome& outcome, const std::string& what) {
    if (!outcome.started) return what + " could not start: " + outcome.start_error;
    if (outcome.stopped_by == LimitHit::WallClock) {
        return what + " could not finish: the machine was too busy (it had " + std::to_string(static_cast<int>(outcome.cpu_seconds)) +
               " s of CPU time in " + std::to_string(static_cast<int>(outcome.seconds)) + " s). Try again when it is less busy.";
    }
    if (outcome.stopped_by == LimitHit::CpuTime) {
        return what + " was stopped after " + std::to_string(static_cast<int>(outcome.cpu_seconds)) +
               " s of CPU time, its limit: your file takes far too long to compile. Look for templates or "
               "constexpr code that expand without end, and keep to what the exercise asks.";
    }
    if (outcome.too_many_processes()) return what + " was stopped: too many processes.";
    if (outcome.out_of_time()) {
        return what + " was stopped by its limit on " + to_string(outcome.stopped_by) + " (" +
               std::to_string(static_cast<int>(outcome.cpu_seconds)) + " s of CPU time used).";
    }
    if (outcome.memory_exceeded()) return what + " used too much memory and was stopped.";
    if (outcome.output_exceeded()) return what + " printed too much and was stopped.";
    return outcome.output;
}

// Adds a plain-words hint under the linker's own message.
std::string explain_link_failure(const std::string& output) {
    static const std::regex undefined(R"(undefined reference to `([^']+)')");
    std::set<std::string> names;
    for (std::sregex_iterator it(output.begin(), output.end(), undefined), end; it != end; ++it) {
        names.insert((*it)[1]);
    }
    std::string hint;
    for (const auto& name : names) {
        if (name.rfind("cuda", 0) == 0 || name.rfind("nccl", 0) == 0) {
            hint += "\n" + name + " is not part of the simulated CUDA runtime: the lessons need only the calls the "
                                  "lesson text shows. Use one of those instead.";
        } else {
            hint += "\n`" + name + "` is declared but never defined: define it in your file, or do not call it.";
        }
    }
    return output + hint;
}

// The folders holding a thin archive's members (GNU ar's "!<thin>" format: the archive keeps
// only their paths, relative to its own folder, in its "//" member), which the linker must read.
std::vector<std::string> thin_archive_member_dirs(const std::string& archive) {
    const std::string bytes = read_file(archive);
    std::vector<std::string> dirs;
    if (bytes.rfind("!<thin>\n", 0) != 0) return dirs;
    for (std::size_t at = 8; at + 60 <= bytes.size();) {
        const std::string name = bytes.substr(at, 16);
        const std::size_t size = std::strtoull(bytes.substr(at + 48, 10).c_str(), nullptr, 10);
        at += 60;
        const bool has_data = name.rfind("/ ", 0) == 0 || name.rfind("// ", 0) == 0 || name.rfind("/SYM64/", 0) == 0;
        if (name.rfind("// ", 0) == 0) {
            std::istringstream names(bytes.substr(at, size));
            std::string member;
            while (std::getline(names, member)) {
                while (!member.empty() && (member.back() == '/' || member.back() == '\r')) member.pop_back();
                if (member.empty()) continue;
                const fs::path dir = (fs::path(archive).parent_path() / member).parent_path().lexically_normal();
                if (std::find(dirs.begin(), dirs.end(), dir.string()) == dirs.end()) dirs.push_back(dir.string());
            }
        }
        if (has_data) at += size + (size % 2);
    }
    return dirs;
}

// A program named without a folder, found the way the sandbox's PATH finds it.
fs::path locate_program(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    std::string path = judge_path_variable();
    for (std::size_t start = 0; start <= path.size();) {
        const std::size_t end = std::min(path.find(':', start), path.size());
        const fs::path candidate = fs::path(path.substr(start, end - start)) / program;
        std::error_code error;
        if (!candidate.parent_path().empty() && fs::exists(candidate, error)) return candidate;
        start = end + 1;
    }
    return {};
}

}  // namespace

std::vector<std::string> toolchain_dirs(const LessonBuild& build) {
    std::vector<std::string> dirs;
    for (const auto* command : {&build.cxx, &build.nvcc}) {
        if (command->empty()) continue;
        std::error_code error;
        const fs::path found = locate_program(command->front());
        if (found.empty()) continue;
        for (const fs::path& program : {fs::absolute(found, error), fs::canonical(found, error)}) {
            if (program.empty()) continue;
            fs::path dir = program.parent_path();
            if (dir.filename() == "bin") dir = dir.parent_path();
            const std::string text = dir.lexically_normal().string();
            if (text == "/usr" || text.rfind("/usr/", 0) == 0 || text == "/" || text.empty()) continue;
            if (std::find(dirs.begin(), dirs.end(), text) == dirs.end()) dirs.push_back(text);
        }
    }
    return dirs;
}

std::vector<std::string> simulator_compile_command(const Lesson& lesson, const LessonBuild& build, bool cuda_file,
                                                   bool race_build) {
    std::vector<std::string> compile = build.cxx;
    compile.insert(compile.end(), build.cxx_flags.begin(), build.cxx_flags.end());
    if (race_build) compile.insert(compile.end(), build.race_flags.begin(), build.race_flags.end());
    // tools/sim/prelude/meson.build precompiles the prelude with these flags: change both together.
    // Line tables are all the kit reads from the debug information (a fault's line, through
    // addr2line); tracking where variables live would add a sixth to every compile.
    compile.insert(compile.end(), {"-std=c++20", "-O1", "-g", "-fno-var-tracking-assignments",
                                   "-fdiagnostics-color=never", "-iquote", lesson.exercise_dir});
    // The simulator's headers stand where CUDA's would: system headers, whose own warnings
    // are not the student's business.
    for (const auto& dir : build.include_dirs) compile.insert(compile.end(), {"-isystem", dir});
    // What nvcc puts before every .cu file, precompiled: most of a compile is these headers.
    const std::string& prelude = race_build ? build.race_prelude : build.prelude;
    if (cuda_file && !prelude.empty()) compile.insert(compile.end(), {"-include", prelude});
    return compile;
}

BuiltChecker build_checker(const Lesson& lesson, const LessonBuild& build, const std::vector<SubmissionFile>& files,
                           const BuildSettings& given_settings) {
    BuildSettings settings = given_settings;
    settings.readable_paths = build.include_dirs;
    settings.readable_paths.push_back(lesson.exercise_dir);
    settings.toolchain_dirs = toolchain_dirs(build);
    // Meson's archives are thin: their members stay in a folder beside them.
    for (const auto& archive : build.link_archives) {
        settings.readable_paths.push_back(fs::path(archive).parent_path().string());
        for (const auto& dir : thin_archive_member_dirs(archive)) settings.readable_paths.push_back(dir);
    }
    if (!build.cu2cpp.empty()) settings.readable_paths.push_back(build.cu2cpp);
    if (!build.prelude.empty()) settings.readable_paths.push_back(fs::path(build.prelude).parent_path().string());
    const bool real_gpu = !build.nvcc.empty();
    std::error_code error;
    fs::create_directories(settings.cache_dir, error);
    if (error) throw KitError("cannot create the build cache " + settings.cache_dir + ": " + error.message());

    const std::string key = cache_key(lesson, build, files);
    const fs::path entry = fs::path(settings.cache_dir) / key;
    if (fs::exists(entry / "checker")) {
        fs::last_write_time(entry, fs::file_time_type::clock::now(), error);   // keeps it among the newest
        BuiltChecker cached;
        cached.ok = true;
        cached.binary = (entry / "checker").string();
        if (fs::exists(entry / kRaceBinary)) cached.race_binary = (entry / kRaceBinary).string();
        cached.cache_entry = entry.string();
        cached.from_cache = true;
        return cached;
    }

    const std::string workspace = new_workspace(settings.cache_dir);
    struct RemoveOnExit {
        std::string dir;
        ~RemoveOnExit() {
            std::error_code ignored;
            if (!dir.empty()) fs::remove_all(dir, ignored);
        }
    } cleanup{workspace};

    // The compiler's messages are shown as nvcc would give them (compiler_messages.h): these are
    // the folders the student did not write.
    messages::CompileContext message_context;
    for (const auto& dir : build.include_dirs) {
        message_context.internal_folders.push_back(dir);
        if (fs::exists(fs::path(dir) / "cuda_runtime_api.h")) message_context.api_headers = dir;
    }
    for (const auto& archive : build.link_archives) message_context.internal_folders.push_back(fs::path(archive).parent_path());
    if (!build.cu2cpp.empty()) message_context.internal_folders.push_back(fs::path(build.cu2cpp).parent_path());
    if (!build.prelude.empty()) message_context.internal_folders.push_back(fs::path(build.prelude).parent_path());
    message_context.internal_folders.push_back(workspace);

    std::vector<std::string> objects;
    std::vector<ElfObject> inspected;
    // docs/host-races.md: a second binary, instrumented by ThreadSanitizer, for the race cases.
    const bool race_build = !real_gpu && !build.race_flags.empty();
    std::vector<std::string> race_objects;
    for (const auto& file : files) {
        const std::string source = read_file(file.path);
        const fs::path stem = fs::path(file.name).stem();
        const fs::path rewritten = fs::path(workspace) / (stem.string() + ".cpp");
        const std::string object = (fs::path(workspace) / (stem.string() + ".o")).string();
        if (real_gpu && fs::path(file.name).extension() == ".cu") {
            // Real GPUs: nvcc compiles the file as the student wrote it, against the CUDA Toolkit's
            // headers only.
            const fs::path copy = fs::path(workspace) / file.name;
            write_file(copy, source);
            std::vector<std::string> compile = build.nvcc;
            compile.insert(compile.end(), build.nvcc_flags.begin(), build.nvcc_flags.end());
            // nvcc has no -iquote; the workspace holds only the student's file, so -I finds the
            // kit's header, never a copy of the student's.
            compile.insert(compile.end(), {"-std=c++20", "-I" + lesson.exercise_dir});
            for (const auto& dir : build.include_dirs) compile.insert(compile.end(), {"-isystem", dir});
            compile.insert(compile.end(), {"-c", copy.string(), "-o", object});
            ProcessOutcome compiled = run_tool(compile, settings, workspace, true, settings.compile_cpu_seconds * 2);
            if (!compiled.started) throw KitError("cannot run nvcc: " + compiled.start_error);
            if (!succeeded(compiled)) return not_built("compile error", explain_outcome(compiled, "nvcc"));
        } else if (fs::path(file.name).extension() == ".cu") {
            if (build.cu2cpp.empty()) throw KitError("the launch rewriter cu2cpp was not built: .cu files cannot be checked");
            const fs::path copy = fs::path(workspace) / file.name;
            write_file(copy, source);
            ProcessOutcome rewrite =
                run_tool({build.cu2cpp, "--display-name", file.display, copy.string(), "-o", rewritten.string()},
                         settings, workspace, true, 60);
            if (!rewrite.started) throw KitError("cannot run cu2cpp: " + rewrite.start_error);
            message_context.files.push_back({file.display, copy, rewritten});
            if (!succeeded(rewrite)) {
                return not_built("compile error", file.display + " could not be read as CUDA C++:\n" +
                                                      explain_outcome(rewrite, "the launch rewriter"));
            }
        } else {
            // Quote includes resolve against the workspace, which holds only this file, so the
            // exercise's own header (from the kit) is the one used; #line keeps messages on the
            // student's path and lines.
            std::string quoted;
            for (char c : file.display) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
            write_file(rewritten, "#line 1 \"" + quoted + "\"\n" + source);
            message_context.files.push_back({file.display, file.path, {}});
        }

        if (!real_gpu || fs::path(file.name).extension() != ".cu") {   // g++ on the (rewritten) file
            std::vector<std::string> compile =
                simulator_compile_command(lesson, build, fs::path(file.name).extension() == ".cu", false);
            // To assembly first, then assembled: the assembly shows where the file uses inline asm.
            const std::string assembly = (fs::path(workspace) / (stem.string() + ".s")).string();
            compile.insert(compile.end(), {"-S", rewritten.string(), "-o", assembly});
            ProcessOutcome compiled = run_tool(compile, settings, workspace, true, settings.compile_cpu_seconds);
            if (!compiled.started) throw KitError("cannot run the C++ compiler: " + compiled.start_error);
            if (!succeeded(compiled)) {
                std::string text = explain_outcome(compiled, "the compiler");
                if (text == compiled.output) text = messages::nvcc_style_messages(text, message_context);
                if (text.find("No such file or directory") != std::string::npos) {
                    text += "\nA file your code includes was not found. While grading, the compiler sees only your "
                            "own file, the lesson's header, the simulator's headers and the system's: include only "
                            "those (files elsewhere in the kit or in other folders are hidden).";
                }
                return not_built("compile error", text);
            }
            const AssemblyFindings findings = inspect_assembly(read_file(assembly), file.display);
            if (!findings.asm_lines.empty()) {
                std::string text;
                for (int at : findings.asm_lines) {
                    text += (text.empty() ? "" : "\n") + file.display + (at > 0 ? ":" + std::to_string(at) : "") +
                            ": inline assembly (asm). Your code runs inside the checker's process, where assembly "
                            "could reach past the CUDA runtime into the checker itself: write it in C++ or CUDA C++.";
                }
                return not_built("inline assembly", text);
            }
            if (!findings.problems.empty()) {
                std::string text;
                for (const auto& problem : findings.problems) text += (text.empty() ? "" : "\n") + problem;
                return not_built("forbidden symbol", text);
            }
            std::vector<std::string> assemble = build.cxx;
            assemble.insert(assemble.end(), {"-c", assembly, "-o", object});
            ProcessOutcome assembled = run_tool(assemble, settings, workspace, true, settings.compile_cpu_seconds);
            if (!assembled.started) throw KitError("cannot run the assembler: " + assembled.start_error);
            if (!succeeded(assembled)) throw KitError("the compiler's own assembly did not assemble: " + assembled.output);
            if (race_build) {
                // The same file again for the race cases, instrumented; it compiled once, so a failure
                // here is the kit's (the sanitizer's runtime missing, say).
                const std::string race_object = (fs::path(workspace) / (stem.string() + ".races.o")).string();
                std::vector<std::string> race_compile =
                    simulator_compile_command(lesson, build, fs::path(file.name).extension() == ".cu", true);
                race_compile.insert(race_compile.end(), {"-c", rewritten.string(), "-o", race_object});
                ProcessOutcome race_compiled =
                    run_tool(race_compile, settings, workspace, true, settings.compile_cpu_seconds);
                if (!race_compiled.started) throw KitError("cannot run the C++ compiler: " + race_compiled.start_error);
                if (!succeeded(race_compiled))
                    throw KitError("the race cases' build of " + file.display + " failed: " + race_compiled.output);
                race_objects.push_back(race_object);
            }
        }

        ElfObject elf;
        for (const char* what : {"-S", "-s", "-r"}) {
            ProcessSpec spec;
            spec.argv = {"readelf", "-W", what, object};
            spec.environment = tool_environment();
            spec.limits.kept_output_bytes = std::size_t{16} << 20;
            spec.limits.output_bytes = std::size_t{64} << 20;
            ProcessOutcome listing = run_process(spec);
            if (!succeeded(listing)) throw KitError("readelf failed on " + object + ": " + listing.output + listing.start_error);
            if (what[1] == 'S') elf.sections = parse_sections(listing.output);
            if (what[1] == 's') elf.symbols = parse_symbols(listing.output);
            if (what[1] == 'r') elf.relocations = parse_relocations(listing.output);
        }
        if (elf.sections.empty()) throw KitError("readelf found no sections in " + object);
        auto problems = forbidden_content(elf, file.display, system_symbols(build.cxx), real_gpu);
        if (!problems.empty()) {
            std::string text;
            for (const auto& problem : problems) text += (text.empty() ? "" : "\n") + problem;
            return not_built("forbidden symbol", text);
        }
        inspected.push_back(std::move(elf));
        objects.push_back(object);
    }

    InterfaceCheck interface = check_interface(inspected, lesson.interface);
    if (!interface.wrong_signature.empty() || !interface.missing.empty()) {
        std::string names;
        for (const auto& file : files) names += (names.empty() ? "" : ", ") + file.display;
        std::string text;
        for (const auto& sentence : interface.wrong_signature) {
            text += (text.empty() ? "" : "\n") + names + " " + sentence +
                    ": make the definition match the header exactly (parameter types, const, return type).";
        }
        for (const auto& missing : interface.missing) {
            text += (text.empty() ? "" : "\n") + names + " does not define `" + missing +
                    "`, which the exercise's header declares: keep every function of the skeleton, even one you "
                    "have not finished.";
        }
        return not_built(interface.wrong_signature.empty() ? "missing function" : "wrong signature", text);
    }

    // The student's files, as bytes in an object of the kit's own (student_sources.cpp reads them).
    {
        const fs::path embedded = fs::path(workspace) / "mgpu_student_sources.cpp";
        const std::string object = (fs::path(workspace) / "mgpu_student_sources.o").string();
        write_file(embedded, embedded_sources(files));
        std::vector<std::string> compile = build.cxx;
        compile.insert(compile.end(), {"-O0", "-c", embedded.string(), "-o", object});
        ProcessOutcome compiled = run_tool(compile, settings, workspace, false);
        if (!compiled.started) throw KitError("cannot run the C++ compiler: " + compiled.start_error);
        if (!succeeded(compiled)) throw KitError("the student's sources could not be embedded: " + compiled.output);
        objects.push_back(object);
        race_objects.push_back(object);
    }

    // The kit's archives come first, so where the student's object and ours both carry an inline
    // or template definition, ours is the one kept.
    const auto link_command = [&](const std::vector<std::string>& flags, const std::string& output,
                                  const std::vector<std::string>& linked_objects) {
        std::vector<std::string> link = build.cxx;
        link.insert(link.end(), flags.begin(), flags.end());
        link.insert(link.end(), {"-o", output, "-Wl,--whole-archive"});
        link.insert(link.end(), build.link_archives.begin(), build.link_archives.end());
        link.push_back("-Wl,--no-whole-archive");
        link.insert(link.end(), linked_objects.begin(), linked_objects.end());
        link.insert(link.end(), build.link_flags.begin(), build.link_flags.end());
        return link;
    };
    const std::string binary = (fs::path(workspace) / "checker").string();
    ProcessOutcome linked = run_tool(link_command({}, binary, objects), settings, workspace, false);
    if (!linked.started) throw KitError("cannot run the linker: " + linked.start_error);
    if (!succeeded(linked)) return not_built("link error", explain_link_failure(explain_outcome(linked, "the linker")));
    if (race_build) {
        const std::string race_binary = (fs::path(workspace) / kRaceBinary).string();
        ProcessOutcome race_linked =
            run_tool(link_command(build.race_flags, race_binary, race_objects), settings, workspace, false);
        if (!race_linked.started) throw KitError("cannot run the linker: " + race_linked.start_error);
        if (!succeeded(race_linked)) throw KitError("the race cases' binary did not link: " + race_linked.output);
    }

    // Publish the build: a concurrent judge may have published the same key first.
    fs::rename(workspace, entry, error);
    if (error && !fs::exists(entry / "checker")) {
        throw KitError("cannot store the build in " + entry.string() + ": " + error.message());
    }
    if (!error) cleanup.dir.clear();
    prune_cache(settings.cache_dir);

    BuiltChecker built;
    built.ok = true;
    built.binary = (entry / "checker").string();
    if (race_build) built.race_binary = (entry / kRaceBinary).string();
    built.cache_entry = entry.string();
    return built;
}

}  // namespace mgpu::judge
