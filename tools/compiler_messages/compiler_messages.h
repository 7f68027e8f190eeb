// What g++ says about a student's program, told the way nvcc would tell it: at the student's file
// and line, with the CUDA API's signatures as CUDA's headers declare them, and without the
// simulator's own types, headers, generated names or notes. Both `run` and the checker's build
// pass the compiler's output through here.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mgpu::messages {

// A file the student wrote, as the compiler names it (`shown`, the name #line gives it), with the
// file as written and, for a .cu file, the C++ that cu2cpp made of it (same lines, but a launch
// line reads differently, so columns on it need mapping back).
struct StudentFile {
    std::string shown;
    std::filesystem::path original;
    std::filesystem::path rewritten;   // empty when the compiler read the original itself
};

struct CompileContext {
    // Folders whose files the student never wrote: the simulator's headers, the kit's build folder,
    // the kit's tools/. A message located there is the simulator's business, not the student's.
    std::vector<std::filesystem::path> internal_folders;
    // The folder holding the headers with CUDA's names (cuda_runtime_api.h, nccl.h, ...): a note
    // about a declaration there names that header, as a CUDA installation would.
    std::filesystem::path api_headers;
    std::vector<StudentFile> files;
};

// The compiler's output (without colour codes) rewritten; lines that are not the compiler's
// (the linker's, say) pass through with only the simulator's names taken out.
std::string nvcc_style_messages(const std::string& compiler_output, const CompileContext& context);

}  // namespace mgpu::messages
