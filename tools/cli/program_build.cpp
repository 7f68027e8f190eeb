#include "program_build.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unistd.h>

#include "compile_hint.h"
#include "compiler_messages.h"
#include "message_colours.h"
#include "exit_codes.h"
#include "process.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// Bumped when the way programs are built changes, so older cache entries are not reused.
constexpr const char* kRecipeVersion = "run-recipe 2";
// Old builds beyond this many are removed, newest kept.
constexpr std::size_t kCacheEntriesKept = 24;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// FNV-1a, 64 bits: stable across runs and plenty to tell a few dozen cached builds apart.
class ContentHash {
public:
    void add(const std::string& text) {
        for (unsigned char c : text) {
            state_ ^= c;
            state_ *= 0x100000001b3ull;
        }
        add_separator();
    }
    // A file the user edits: its name and content. A built or installed file: its name, size
    // and modification time (cheaper, and they change whenever it is rebuilt).
    void add_content(const fs::path& path) {
        add(path.filename().string());
        add(read_file(path));
    }
    void add_stamp(const fs::path& path) {
        std::error_code error;
        add(path.string());
        add(std::to_string(fs::file_size(path, error)));
        auto time = fs::last_write_time(path, error);
        add(std::to_string(time.time_since_epoch().count()));
    }
    std::string hex() const {
        std::ostringstream out;
        out << std::hex << std::setw(16) << std::setfill('0') << state_;
        return out.str();
    }

private:
    void add_separator() {
        state_ ^= 0xff;
        state_ *= 0x100000001b3ull;
    }
    std::uint64_t state_ = 0xcbf29ce484222325ull;
};

bool is_header(const fs::path& path) {
    const std::string extension = path.extension().string();
    return extension == ".h" || extension == ".hpp" || extension == ".cuh" || extension == ".inc" || extension == ".inl";
}

// How errors and the simulator's messages name a file: as the user would type it from here.
std::string display_name(const fs::path& file) {
    std::error_code error;
    fs::path relative = fs::relative(file, fs::current_path(error), error);
    if (error || relative.empty() || *relative.begin() == "..") return file.string();
    return relative.string();
}

std::vector<fs::path> files_under(const fs::path& folder) {
    std::vector<fs::path> files;
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(folder, error); !error && it != fs::recursive_directory_iterator();
         it.increment(error))
        if (it->is_regular_file()) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<fs::path> header_folders(const Kit& kit) {
    return {kit.root / "tools" / "sim" / "include", kit.root / "tools" / "trace" / "include"};
}

void add_folder_headers(ContentHash& hash, const fs::path& folder) {
    std::error_code error;
    std::vector<fs::path> headers;
    for (const auto& entry : fs::directory_iterator(folder, error))
        if (entry.is_regular_file() && is_header(entry.path())) headers.push_back(entry.path());
    std::sort(headers.begin(), headers.end());
    for (const auto& header : headers) hash.add_content(header);
}

std::string cache_key(const Kit& kit, const ProgramSources& sources, const CompileOptions& options,
                      const std::vector<std::string>& flags) {
    ContentHash hash;
    hash.add(kRecipeVersion);
    for (const auto& word : kit.compiler()) hash.add(word);
    for (const auto& flag : flags) hash.add(flag);
    for (const auto& flag : kit.sim_link_flags()) hash.add(flag);
    for (const auto& library : kit.sim_libraries()) hash.add_stamp(library);
    hash.add_stamp(kit.cu2cpp());
    for (const auto& folder : header_folders(kit))
        for (const auto& header : files_under(folder)) hash.add_stamp(header);
    for (const auto& file : sources.files) {
        hash.add_content(file);
        hash.add(display_name(file));
    }
    // The headers a program includes: those beside its files and in its -I folders (one level,
    // as the usual layouts keep them; a header deeper down is caught when a file including it changes).
    std::vector<fs::path> folders = {sources.folder};
    for (const auto& file : sources.files)
        if (std::find(folders.begin(), folders.end(), file.parent_path()) == folders.end())
            folders.push_back(file.parent_path());
    folders.insert(folders.end(), options.include_dirs.begin(), options.include_dirs.end());
    for (const auto& folder : folders) add_folder_headers(hash, folder);
    return hash.hex();
}

void check_build_outputs(const Kit& kit) {
    if (kit.cu2cpp().empty())
        throw SetupError("the launch rewriter (cu2cpp) is not part of this build, so CUDA files cannot be built");
    std::vector<fs::path> needed = kit.sim_libraries();
    needed.push_back(kit.cu2cpp());
    for (const auto& path : needed)
        if (!fs::exists(path))
            throw SetupError(path.string() + " has not been built yet; tools/mgpu builds it (or run: ninja -C " +
                             kit.build.string() + ")");
}

void remove_old_entries(const fs::path& cache) {
    std::vector<std::pair<fs::file_time_type, fs::path>> entries;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(cache, error))
        if (entry.is_directory()) entries.emplace_back(fs::last_write_time(entry.path(), error), entry.path());
    if (entries.size() <= kCacheEntriesKept) return;
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = kCacheEntriesKept; i < entries.size(); ++i) fs::remove_all(entries[i].second, error);
}


// The flags every source is compiled with (before the file and output names).
std::vector<std::string> simulator_compile_flags(const Kit& kit, const fs::path& source_folder,
                                                 const CompileOptions& options) {
    // -fopenmp: a program may drive its GPUs from OpenMP threads, as it may from std::thread.
    // -g: a crash in host code is reported at the line that caused it (line information only costs
    // file size).
    // tools/sim/prelude/meson.build precompiles the prelude with these flags: change both together.
    std::vector<std::string> flags = {"-std=c++20", "-O2", "-g", "-Wall", "-fopenmp", "-I" + source_folder.string()};
    for (const auto& folder : options.include_dirs) flags.push_back("-I" + folder.string());
    for (const auto& define : options.defines) flags.push_back("-D" + define);
    // The simulator's headers are system headers here: warnings in them are not the student's to fix.
    for (const auto& folder : header_folders(kit)) {
        flags.push_back("-isystem");
        flags.push_back(folder.string());
    }
    return flags;
}

// nvcc includes cuda_runtime.h in every .cu without being asked; a .cpp file goes to the host
// compiler, which does not, so it includes what it uses itself. The prelude holds cuda_runtime.h
// and the headers cu2cpp puts first, precompiled, so most of the headers' compile time is saved.
std::vector<std::string> cuda_file_flags(const Kit& kit) {
    const fs::path prelude = kit.cuda_prelude();
    if (!prelude.empty() && fs::exists(prelude)) return {"-include", prelude.string()};
    return {"-include", "cuda_runtime.h"};
}

}  // namespace

bool run_steps(const std::vector<BuildStep>& steps, std::string& diagnostics) {
    std::vector<pid_t> children;
    // The compiler speaks English whatever language the kit speaks: its messages are rewritten as
    // nvcc would give them, and nvcc has no translations either.
    const SpawnOptions options{.environment = {{"LC_ALL", "C.UTF-8"}, {"LANGUAGE", ""}}};
    for (const auto& step : steps) {
        SpawnOptions step_options = options;
        step_options.output_file = step.log;
        children.push_back(spawn_process(step.argv, step_options));
    }
    bool all_ok = true;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        ExitStatus status = wait_for_process(children[i]);
        std::string said = read_file(steps[i].log);
        if (!status.ok()) {
            all_ok = false;
            if (said.empty()) said = shell_quote(steps[i].argv) + " failed with " + status.describe() + "\n";
        }
        diagnostics += said;
    }
    return all_ok;
}

BuiltProgram build_program(const Kit& kit, const ProgramSources& sources, const CompileOptions& options,
                           const std::function<void()>& before_building) {
    check_build_outputs(kit);
    const std::vector<std::string> flags = simulator_compile_flags(kit, sources.folder, options);
    const fs::path cache = kit.run_cache();
    const fs::path entry = cache / cache_key(kit, sources, options, flags);
    const fs::path executable = entry / "program";

    BuiltProgram result;
    result.executable = executable;
    if (fs::exists(executable)) {
        result.ok = true;
        std::error_code error;
        fs::last_write_time(entry, fs::file_time_type::clock::now(), error);  // keeps it among the newest
        return result;
    }

    if (before_building) before_building();
    // Built in a private folder and renamed into place, so a concurrent run never sees half a build.
    const fs::path work = entry.string() + ".partial-" + std::to_string(::getpid());
    fs::remove_all(work);
    fs::create_directories(work);

    std::vector<BuildStep> rewrites, compiles;
    // What the compiler says is rewritten as nvcc would say it (compiler_messages.h): the files it
    // may name, and the folders that are the simulator's.
    messages::CompileContext message_context;
    message_context.internal_folders = header_folders(kit);
    message_context.internal_folders.insert(message_context.internal_folders.end(),
                                            {kit.build, kit.root / "tools", fs::absolute(work)});
    message_context.api_headers = kit.root / "tools" / "sim" / "include";
    std::vector<std::string> link = kit.compiler();
    for (std::size_t index = 0; index < sources.files.size(); ++index) {
        const fs::path& file = sources.files[index];
        // Two files of one name from different folders must not share their outputs.
        const std::string name = std::to_string(index) + "-" + file.filename().string();
        fs::path cpp_file = file;
        const bool cuda_file = file.extension() == ".cu";
        if (cuda_file) {
            cpp_file = work / (name + ".cpp");
            std::vector<std::string> rewrite = {kit.cu2cpp().string(), file.string(), "-o", cpp_file.string(),
                                                "--display-name", display_name(file)};
            // cu2cpp follows the headers it finds there too, so a header in an -I folder may launch kernels.
            for (const auto& folder : options.include_dirs) rewrite.insert(rewrite.end(), {"--include-dir", folder.string()});
            rewrites.push_back({rewrite, work / (name + ".rewrite.log")});
            message_context.files.push_back({display_name(file), file, cpp_file});
        } else {
            message_context.files.push_back({file.string(), file, {}});
        }
        std::vector<std::string> compile = kit.compiler();
        compile.insert(compile.end(), flags.begin(), flags.end());
        if (cuda_file) {
            const std::vector<std::string> cuda_flags = cuda_file_flags(kit);
            compile.insert(compile.end(), cuda_flags.begin(), cuda_flags.end());
        }
        // Plain text: the messages are read and rewritten before they are shown.
        compile.push_back("-fdiagnostics-color=never");
        const fs::path object = work / (name + ".o");
        compile.insert(compile.end(), {"-c", cpp_file.string(), "-o", object.string()});
        compiles.push_back({compile, work / (name + ".compile.log")});
        link.push_back(object.string());
    }
    link.insert(link.end(), {"-o", (work / "program").string(), "-Wl,--whole-archive"});
    for (const auto& library : kit.sim_libraries()) link.push_back(library.string());
    link.push_back("-Wl,--no-whole-archive");
    for (const auto& flag : kit.sim_link_flags()) link.push_back(flag);
    link.push_back("-fopenmp");

    result.ok = run_steps(rewrites, result.diagnostics) && run_steps(compiles, result.diagnostics) &&
                run_steps({{link, work / "link.log"}}, result.diagnostics);
    // Warnings of a build that worked are rewritten too, while the rewritten sources are still there.
    if (!result.diagnostics.empty()) {
        result.diagnostics = messages::nvcc_style_messages(result.diagnostics, message_context);
        if (::isatty(STDERR_FILENO)) result.diagnostics = messages::with_colours(result.diagnostics);
    }
    if (!result.ok) {
        result.hint = compile_hint(result.diagnostics);
        fs::remove_all(work);
        return result;
    }
    std::error_code error;
    fs::rename(work, entry, error);
    if (error) fs::remove_all(work);  // another run finished the same build first: use theirs
    if (!fs::exists(executable)) throw SetupError("the built program vanished from " + entry.string());
    remove_old_entries(cache);
    return result;
}

}  // namespace mgpu::cli
