#include "object_inspection.h"

#include <cctype>

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

namespace mgpu::judge {

namespace {

unsigned long long parse_number(const std::string& text, int base) {
    if (text.rfind("0x", 0) == 0) return std::strtoull(text.c_str() + 2, nullptr, 16);
    return std::strtoull(text.c_str(), nullptr, base);
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream stream(line);
    std::vector<std::string> result;
    std::string word;
    while (stream >> word) result.push_back(word);
    return result;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Namespaces and names the checker, the simulator and the standard library own. A strong
// definition there could replace their code (an explicit specialisation, a redefined function).
bool is_reserved_mangled(const std::string& symbol) {
    if (!starts_with(symbol, "_Z")) return false;
    std::string rest = symbol.substr(2);
    // Special names: vtables, typeinfo, guard variables ... of some entity.
    if (starts_with(rest, "T") || starts_with(rest, "GV")) rest = rest.substr(2);
    if (starts_with(rest, "nw") || starts_with(rest, "na") || starts_with(rest, "dl") || starts_with(rest, "da")) {
        return true;   // global operator new / delete
    }
    if (starts_with(rest, "N")) {
        rest = rest.substr(1);
        while (!rest.empty() && (rest[0] == 'r' || rest[0] == 'V' || rest[0] == 'K' || rest[0] == 'R' || rest[0] == 'O')) {
            rest = rest.substr(1);
        }
    }
    static const char* const kReserved[] = {"St",          "Sa",      "Sb",        "Ss",          "Si",
                                             "So",          "Sd",      "4mgpu",     "7doctest",    "9__gnu_cxx",
                                             "10__cxxabiv1", "5boost",  "8nlohmann", "6__pstl",     "3tbb"};
    for (const char* prefix : kReserved) {
        if (starts_with(rest, prefix)) return true;
    }
    return false;
}

bool is_reserved_plain(const std::string& name) {
    static const char* const kPrefixes[] = {"_", "cuda", "cu", "nccl", "mgpu", "doctest"};
    for (const char* prefix : kPrefixes) {
        if (starts_with(name, prefix)) return true;
    }
    return name == "main";
}

const ElfSection* section_by_index(const ElfObject& object, const std::string& index) {
    if (index.empty() || !std::isdigit(static_cast<unsigned char>(index[0]))) return nullptr;
    int wanted = std::atoi(index.c_str());
    for (const auto& section : object.sections) {
        if (section.index == wanted) return &section;
    }
    return nullptr;
}

const ElfSection* section_by_name(const ElfObject& object, const std::string& name) {
    for (const auto& section : object.sections) {
        if (section.name == name) return &section;
    }
    return nullptr;
}

bool is_pc_relative(const std::string& type) {
    return type.find("PC32") != std::string::npos || type.find("PLT32") != std::string::npos ||
           type.find("GOTPCREL") != std::string::npos;
}

// The function symbol of `section` that contains `offset`.
const ElfSymbol* function_at(const ElfObject& object, const ElfSection& section, unsigned long long offset) {
    for (const auto& symbol : object.symbols) {
        if (symbol.type != "FUNC") continue;
        const ElfSection* home = section_by_index(object, symbol.section);
        if (home == nullptr || home->index != section.index) continue;
        if (offset >= symbol.value && offset < symbol.value + std::max(1ULL, symbol.size)) return &symbol;
    }
    return nullptr;
}

// What may happen before main: <iostream>'s std::ios_base::Init (GCC 12 puts one in every file
// that includes it), and registering destructors of constant-initialised globals (a std::set or
// std::vector at namespace scope) with __cxa_atexit. Registered destructors never run in the
// checker: it leaves with _exit. A destructor's address may be taken, never called, here.
bool is_allowed_in_initializer(const ElfRelocation& use) {
    static const std::set<std::string> kAllowed = {"_ZNSt8ios_base4InitC1Ev", "_ZNSt8ios_base4InitD1Ev",
                                                   "__cxa_atexit", "__dso_handle", "_ZStL8__ioinit",
                                                   "_GLOBAL_OFFSET_TABLE_"};
    if (kAllowed.count(use.symbol)) return true;
    const bool is_call = use.type.find("PLT32") != std::string::npos;
    return !is_call && demangle(use.symbol).find("::~") != std::string::npos;
}

// A variable this object defines (the global being initialised), as opposed to code or a name
// from elsewhere.
bool is_own_data(const ElfObject& object, const std::string& name) {
    for (const auto& symbol : object.symbols) {
        if (symbol.name != name || symbol.section == "UND") continue;
        const ElfSection* home = section_by_index(object, symbol.section);
        return home != nullptr && home->flags.find('X') == std::string::npos;
    }
    return false;
}

std::string readable(const std::string& symbol) {
    std::string text = demangle(symbol);
    return text.size() > 160 ? text.substr(0, 157) + "..." : text;
}

// nvcc's registration function: a file-local constructor it writes into every object with device
// code. A student cannot write one of that name beside nvcc's without a redefinition error.
bool is_nvcc_registration(const ElfSymbol& function) {
    return function.bind == "LOCAL" && function.name == "_ZL24__sti____cudaRegisterAllv";
}

// What nvcc's registration may use: the runtime's __cuda* registration entry points and atexit
// (called), and the addresses of the file's kernels and of its unregistration function (taken,
// not called).
bool is_allowed_in_registration(const ElfRelocation& use) {
    const bool is_call = use.type.find("PLT32") != std::string::npos;
    if (!is_call) return true;
    return use.symbol.rfind("__cuda", 0) == 0 || use.symbol == "atexit";
}

// Problems with the code that .init_array entries point at.
void check_initializers(const ElfObject& object, const std::string& file, bool from_nvcc,
                        std::vector<std::string>* problems) {
    std::set<std::string> reported;
    for (const auto& entry : object.relocations) {
        if (!starts_with(entry.target_section, ".init_array")) continue;
        const ElfSection* code_section = nullptr;
        unsigned long long offset = 0;
        if (const ElfSection* section = section_by_name(object, entry.symbol)) {
            code_section = section;
            offset = static_cast<unsigned long long>(entry.addend);
        } else {
            for (const auto& symbol : object.symbols) {
                if (symbol.name == entry.symbol && symbol.section != "UND") {
                    code_section = section_by_index(object, symbol.section);
                    offset = symbol.value + static_cast<unsigned long long>(entry.addend);
                }
            }
        }
        const ElfSymbol* function = code_section ? function_at(object, *code_section, offset) : nullptr;
        const bool registration = from_nvcc && function != nullptr && is_nvcc_registration(*function);
        if (function == nullptr || (!registration && !starts_with(function->name, "_GLOBAL__sub_I_"))) {
            std::string name = function ? readable(function->name) : entry.symbol;
            problems->push_back(file + " asks for `" + name +
                                "` to run before main (__attribute__((constructor)) or similar). The checker "
                                "calls your functions itself: remove that attribute.");
            continue;
        }
        for (const auto& use : object.relocations) {
            if (use.target_section != code_section->name) continue;
            if (use.offset < function->value || use.offset >= function->value + function->size) continue;
            if (is_allowed_in_initializer(use)) continue;
            if (registration && is_allowed_in_registration(use)) continue;
            const ElfSection* referenced_section = section_by_name(object, use.symbol);
            if (referenced_section != nullptr && referenced_section->flags.find('X') == std::string::npos) {
                continue;   // data of the file itself (where the initialised object lives)
            }
            if (is_own_data(object, use.symbol)) continue;
            std::string target = use.symbol;
            if (referenced_section != nullptr) {
                long long target_offset = use.addend + (is_pc_relative(use.type) ? 4 : 0);
                const ElfSymbol* callee =
                    function_at(object, *referenced_section, static_cast<unsigned long long>(target_offset));
                target = callee ? callee->name : use.symbol;
            }
            if (!reported.insert(target).second) continue;
            problems->push_back(file + " has a global variable whose construction runs code before main (it uses `" +
                                readable(target) +
                                "`). The checker does not allow code to run before its own main: move the variable "
                                "into the function that needs it (a `static` local is fine).");
        }
    }
}

// Names the checker's own machinery answers to: a call of one from the student's file could
// skip checks, reset the machine or read the checker's state.
bool is_checker_machinery(const std::string& readable_name) {
    static const char* const kPrefixes[] = {"mgpu::check::", "mgpu::judge::", "doctest::",
                                            "mgpu::sim::reset_machine(", "mgpu::sim::trace(",
                                            "mgpu::sim::clear_trace(", "mgpu::sim::drain_all(",
                                            "mgpu::sim::options(", "mgpu::sim::options_from_environment(",
                                            "mgpu::sim::machine(", "mgpu::sim::peer_access_enabled(",
                                            "mgpu::sim::device_bytes_in_use(", "mgpu::sim::live_"};
    for (const char* prefix : kPrefixes) {
        if (starts_with(readable_name, prefix)) return true;
    }
    return false;
}


}  // namespace

// C library calls that reach past what the exercises use, into the checker's own process: its
// descriptors (the result channel among them), raw system calls, memory protection (the page
// that holds the run's key), other processes' memory, and code found by name at run time. No
// lesson needs one: a student prints with printf or std::cout and allocates with new or CUDA.
// Returns the sentence's reason, or "" for a call the exercises may make.
std::string low_level_call_reason(std::string name) {
    // glibc's own spellings of the same calls: __read, __pread64_chk (fortified), pread64.
    if (starts_with(name, "__")) name = name.substr(2);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, "_chk") == 0) name.resize(name.size() - 4);
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "64") == 0) name.resize(name.size() - 2);
    static const std::set<std::string> descriptor_calls = {
        "read", "write", "pread", "pwrite", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
        "lseek", "llseek", "dup", "dup2", "dup3", "close", "close_range", "closefrom", "fcntl", "ioctl",
        "fdopen", "open", "openat", "openat2", "creat", "pipe", "pipe2", "sendfile", "splice", "tee",
        "vmsplice", "copy_file_range", "memfd_create", "fchmod", "fchown", "ftruncate", "socketpair"};
    static const std::set<std::string> process_calls = {
        "syscall", "mprotect", "pkey_mprotect", "pkey_alloc", "pkey_set", "process_vm_readv",
        "process_vm_writev", "ptrace", "prctl", "seccomp", "personality", "dlopen", "dlmopen", "dlsym",
        "dlvsym", "dl_iterate_phdr", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
        "fexecve", "posix_spawn", "posix_spawnp", "system", "popen"};
    if (descriptor_calls.count(name)) {
        return "works on file descriptors directly. The checker talks to the grader through descriptors of its "
               "own, and the exercise needs none: print with printf or std::cout, and remove the call";
    }
    if (process_calls.count(name)) {
        return "reaches into the checker's process (system calls, memory protection, other programs or code "
               "loaded by name) that the exercise never needs: remove the call";
    }
    return "";
}

std::vector<ElfSection> parse_sections(const std::string& text) {
    static const std::regex row(R"(^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+[0-9a-fA-F]+\s+[0-9a-fA-F]+\s+[0-9a-fA-F]+\s+[0-9a-fA-F]+\s*([A-Za-z]*)\s+\d+)");
    std::vector<ElfSection> sections;
    std::istringstream lines(text);
    std::string line;
    std::smatch match;
    while (std::getline(lines, line)) {
        if (std::regex_search(line, match, row)) {
            sections.push_back(ElfSection{std::stoi(match[1]), match[2], match[3], match[4]});
        }
    }
    return sections;
}

std::vector<ElfSymbol> parse_symbols(const std::string& text) {
    std::vector<ElfSymbol> symbols;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        auto fields = words(line);
        // "Num: Value Size Type Bind Vis Ndx [Name]"
        if (fields.size() < 7 || fields[0].empty() || fields[0].back() != ':' ||
            !std::isdigit(static_cast<unsigned char>(fields[0][0]))) {
            continue;
        }
        ElfSymbol symbol;
        symbol.value = std::strtoull(fields[1].c_str(), nullptr, 16);
        symbol.size = parse_number(fields[2], 10);
        symbol.type = fields[3];
        symbol.bind = fields[4];
        symbol.section = fields[6];
        if (fields.size() > 7) {
            symbol.name = fields[7];
            // Versioned names ("foo@GLIBC_2.2.5") appear in shared objects only; strip anyway.
            auto at = symbol.name.find('@');
            if (at != std::string::npos && at > 0) symbol.name.resize(at);
        }
        symbols.push_back(symbol);
    }
    return symbols;
}

std::vector<ElfRelocation> parse_relocations(const std::string& text) {
    static const std::regex header(R"(^Relocation section '\.rela?(\S*)')");
    std::vector<ElfRelocation> relocations;
    std::istringstream lines(text);
    std::string line;
    std::string current;
    std::smatch match;
    while (std::getline(lines, line)) {
        if (std::regex_search(line, match, header)) {
            current = match[1];
            continue;
        }
        auto fields = words(line);
        if (current.empty() || fields.size() < 3 || !std::isxdigit(static_cast<unsigned char>(fields[0][0])) ||
            fields[2].rfind("R_", 0) != 0) {
            continue;
        }
        ElfRelocation relocation;
        relocation.target_section = current;
        relocation.offset = std::strtoull(fields[0].c_str(), nullptr, 16);
        relocation.type = fields[2];
        if (fields.size() >= 5) {
            relocation.symbol = fields[4];
            if (fields.size() >= 7) {
                long long amount = static_cast<long long>(std::strtoull(fields[6].c_str(), nullptr, 16));
                relocation.addend = fields[5] == "-" ? -amount : amount;
            }
        }
        relocations.push_back(relocation);
    }
    return relocations;
}

std::string demangle(const std::string& symbol) {
    if (!starts_with(symbol, "_Z")) return symbol;
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                 std::free);
    return status == 0 && text ? std::string(text.get()) : symbol;
}

InterfaceCheck check_interface(const std::vector<ElfObject>& objects, const std::vector<std::string>& interface) {
    std::set<std::string> defined;
    std::multimap<std::string, std::string> by_base_name;
    for (const auto& object : objects) {
        for (const auto& symbol : object.symbols) {
            if (symbol.section == "UND" || symbol.type != "FUNC" || symbol.bind == "LOCAL") continue;
            std::string readable_name = demangle(symbol.name);
            defined.insert(readable_name);
            by_base_name.emplace(readable_name.substr(0, readable_name.find('(')), readable_name);
        }
    }
    InterfaceCheck result;
    for (const auto& wanted : interface) {
        if (defined.count(wanted)) continue;
        std::string base = wanted.substr(0, wanted.find('('));
        auto range = by_base_name.equal_range(base);
        if (range.first == range.second) {
            result.missing.push_back(wanted);
            continue;
        }
        std::string found;
        for (auto it = range.first; it != range.second; ++it) found += (found.empty() ? "`" : ", `") + it->second + "`";
        result.wrong_signature.push_back("defines " + found + ", but the exercise's header declares `" + wanted + "`");
    }
    return result;
}

std::vector<std::string> forbidden_content(const ElfObject& object, const std::string& file,
                                           const std::vector<std::string>& system_symbols, bool from_nvcc) {
    std::vector<std::string> problems;
    const std::set<std::string> system(system_symbols.begin(), system_symbols.end());

    for (const auto& section : object.sections) {
        const std::string& name = section.name;
        if (name == ".ctors" || starts_with(name, ".ctors.") || name == ".preinit_array" || name == ".init") {
            problems.push_back(file + " contains code that runs before main (section " + name +
                               "). The checker calls your functions itself: remove it.");
        } else if (name == ".dtors" || starts_with(name, ".dtors.") || starts_with(name, ".fini_array") ||
                   name == ".fini") {
            problems.push_back(file + " contains code that runs when the program exits (section " + name +
                               ", for instance __attribute__((destructor))): remove it.");
        }
    }
    check_initializers(object, file, from_nvcc, &problems);

    std::set<std::string> machinery_reported;
    for (const auto& symbol : object.symbols) {
        if (symbol.section == "UND" && !symbol.name.empty()) {
            const std::string name = demangle(symbol.name);
            if (is_checker_machinery(name) && machinery_reported.insert(name).second) {
                problems.push_back(file + " calls `" + readable(symbol.name) +
                                   "`, which belongs to the checker, not to the CUDA runtime: remove that call.");
            } else if (const std::string reason = low_level_call_reason(symbol.name);
                       from_nvcc && symbol.name != "syscall" && !reason.empty() &&
                       machinery_reported.insert(name).second) {
                // (g++'s objects are checked line by line in their assembly, inspect_assembly;
                // nvcc's only here, where the futex calls of <atomic>'s wait, <latch> and
                // <semaphore>, inlined from the C++ library's headers, cannot be told apart from
                // the student's own `syscall`.)
                problems.push_back(file + " calls `" + symbol.name + "`, which " + reason + ".");
            }
            continue;
        }
        if (symbol.name.empty() || symbol.type == "SECTION" || symbol.type == "FILE") continue;
        if (symbol.type == "GNU_IFUNC" || symbol.type == "IFUNC") {
            problems.push_back(file + " defines `" + readable(symbol.name) +
                               "` as an indirect function (ifunc), whose resolver runs while the program loads: "
                               "make it an ordinary function.");
            continue;
        }
        if (symbol.bind != "GLOBAL") continue;   // local, weak and unique definitions cannot replace ours
        if (starts_with(symbol.name, "_Z")) {
            // The simulated CUDA runtime and NCCL are C++ functions in the global namespace
            // (cudaGetDeviceCount(int*, Site)): a definition with their name and parameters would
            // take their place at link time.
            const std::string shown = readable(symbol.name);
            const bool runtime_name = (starts_with(shown, "cuda") || starts_with(shown, "nccl")) && shown.size() > 4 &&
                                      std::isupper(static_cast<unsigned char>(shown[4]));
            if (is_reserved_mangled(symbol.name) || runtime_name) {
                problems.push_back(file + " defines `" + shown +
                                   "`, which belongs to the C++ library, the simulator or the checker. Your file "
                                   "may define only its own functions and variables.");
            }
            continue;
        }
        const bool is_code = symbol.type == "FUNC" || (symbol.type == "NOTYPE" && [&] {
                                 const ElfSection* home = section_by_index(object, symbol.section);
                                 return home && home->flags.find('X') != std::string::npos;
                             }());
        if (symbol.name == "main") {
            problems.push_back(file + " defines main. The checker brings its own main and calls your functions: "
                                      "keep main in the exercise's separate main file (or delete it from this one).");
        } else if (is_code) {
            problems.push_back(file + " defines the C function `" + symbol.name +
                               "` (extern \"C\"), which could replace a library function of that name: remove "
                               "extern \"C\" from it, or make it static.");
        } else if (system.count(symbol.name) || is_reserved_plain(symbol.name)) {
            problems.push_back(file + " defines the global variable `" + symbol.name +
                               "`, a name the C/C++ libraries, CUDA or the checker already use: rename it, or make it "
                               "static.");
        }
    }
    return problems;
}

AssemblyFindings inspect_assembly(const std::string& assembly, const std::string& student_file) {
    static const std::regex file_directive(R"re(^\s*\.file\s+(\d+)\s+(?:"[^"]*"\s+)?"([^"]*)")re");
    static const std::regex loc_directive(R"(^\s*\.loc\s+(\d+)\s+(\d+))");
    static const std::regex symbol(R"((^|[^%A-Za-z0-9_.$])([A-Za-z_][A-Za-z0-9_]*)(@[A-Za-z]+)?)");
    std::map<int, std::string> files;
    struct Seen {
        int file, line;
        std::string call;   // "" for an asm block
    };
    std::vector<Seen> seen;
    int file = -1, line = 0;
    bool in_function = false, in_asm = false;
    std::istringstream lines(assembly);
    std::string text;
    std::smatch match;
    while (std::getline(lines, text)) {
        if (text.rfind("#APP", 0) == 0) {
            in_asm = true;
            seen.push_back({in_function ? file : -1, in_function ? line : 0, ""});
        } else if (text.rfind("#NO_APP", 0) == 0) {
            in_asm = false;
        } else if (std::regex_search(text, match, loc_directive)) {
            file = std::stoi(match[1]);
            line = std::stoi(match[2]);
        } else if (std::regex_search(text, match, file_directive)) {
            files[std::stoi(match[1])] = match[2];
        } else if (text.find(".cfi_startproc") != std::string::npos) {
            in_function = true;
        } else if (text.find(".cfi_endproc") != std::string::npos) {
            in_function = false;
        } else if (!in_asm && !text.empty() && (text[0] == '\t' || text[0] == ' ')) {
            // An instruction's operands, or the symbols a data directive (.quad) names.
            std::size_t at = text.find_first_not_of(" \t");
            if (at == std::string::npos || (text[at] == '.' && text.compare(at, 5, ".quad") != 0 &&
                                            text.compare(at, 5, ".long") != 0)) continue;
            at = text.find_first_of(" \t", at);
            if (at == std::string::npos) continue;
            const std::string operands = text.substr(at);
            for (std::sregex_iterator it(operands.begin(), operands.end(), symbol), end; it != end; ++it) {
                const std::string name = (*it)[2];
                if (!low_level_call_reason(name).empty()) seen.push_back({in_function ? file : -1, in_function ? line : 0, name});
            }
        }
    }
    AssemblyFindings found;
    std::set<std::string> reported;
    for (const auto& [number, at, call] : seen) {
        const auto named = files.find(number);
        if (number != -1 && (named == files.end() || named->second != student_file)) continue;
        if (call.empty()) {
            found.asm_lines.push_back(at);
        } else if (reported.insert(call).second) {
            found.calls.push_back(std::string(call) + (at > 0 ? " (line " + std::to_string(at) + ")" : ""));
            found.problems.push_back(student_file + (at > 0 ? ":" + std::to_string(at) : "") + ": calls `" + call +
                                     "`, which " + low_level_call_reason(call) + ".");
        }
    }
    return found;
}

}  // namespace mgpu::judge
