// What a compiled student object defines, and whether the checker can let it in. A student's
// file supplies functions only: the checker owns main, the libraries and everything that runs
// before main. Read with readelf from binutils.
#pragma once

#include <string>
#include <vector>

namespace mgpu::judge {

struct ElfSection {
    int index = 0;
    std::string name;
    std::string type;
    std::string flags;      // readelf's letters: W write, A alloc, X execute, ...
};

struct ElfSymbol {
    std::string name;       // as stored (mangled)
    std::string type;       // FUNC, OBJECT, NOTYPE, SECTION, GNU_IFUNC, TLS, COMMON, FILE
    std::string bind;       // LOCAL, GLOBAL, WEAK, UNIQUE
    std::string section;    // "UND", "ABS", "COM" or a section index
    unsigned long long value = 0;
    unsigned long long size = 0;
};

struct ElfRelocation {
    std::string target_section;   // the section the relocation patches (".text" for ".rela.text")
    unsigned long long offset = 0;
    std::string type;
    std::string symbol;           // name of the symbol (or of the section, for section symbols)
    long long addend = 0;
};

struct ElfObject {
    std::vector<ElfSection> sections;
    std::vector<ElfSymbol> symbols;
    std::vector<ElfRelocation> relocations;
};

// Parsers of `readelf -S -W`, `readelf -s -W` and `readelf -r -W` output.
std::vector<ElfSection> parse_sections(const std::string& readelf_sections);
std::vector<ElfSymbol> parse_symbols(const std::string& readelf_symbols);
std::vector<ElfRelocation> parse_relocations(const std::string& readelf_relocations);

std::string demangle(const std::string& symbol);

struct InterfaceCheck {
    std::vector<std::string> missing;         // "can_reach(int, int)": not defined at all
    std::vector<std::string> wrong_signature; // sentences naming what was found instead
};

// Which interface functions (demangled, as `nm -C` writes them) the objects define as global
// functions, all objects together.
InterfaceCheck check_interface(const std::vector<ElfObject>& objects, const std::vector<std::string>& interface);

// Sentences, one per problem: symbols that could replace the checker's or a library's, and code
// that would run before main. `display_name` names the student's file in the sentences;
// `system_symbols` are the names the C and C++ runtime libraries export. `from_nvcc`: the object
// came from nvcc, whose generated code registers the file's kernels with the CUDA runtime before
// main; that registration, and nothing else, is allowed to run then.
std::vector<std::string> forbidden_content(const ElfObject& object, const std::string& display_name,
                                           const std::vector<std::string>& system_symbols, bool from_nvcc = false);

// What the student's own lines of a g++ assembly listing (-S -g) hold that the build refuses.
// `student_file` is the name the compiler's line markers give the file. GCC brackets every asm
// statement with #APP and #NO_APP after the .loc of its source line, and every instruction
// follows the .loc of the line it came from, so code inlined from a header (the futex system
// call inside std::latch, say) is the header's, not the student's. Outside any function (a
// top-level asm block, a table of function addresses) counts as the student's (line 0).
struct AssemblyFindings {
    std::vector<int> asm_lines;          // lines with inline assembly
    std::vector<std::string> calls;      // refused calls (low_level_call_reason), "pread (line 12)"
    std::vector<std::string> problems;   // one sentence per refused call
};
AssemblyFindings inspect_assembly(const std::string& assembly, const std::string& student_file);

// Why a call (a C library function's name) reaches past what the exercises use into the checker's
// process, or "" for one they may make.
std::string low_level_call_reason(std::string name);

}  // namespace mgpu::judge
