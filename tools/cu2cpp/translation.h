// One run of cu2cpp: the input file and every local header it reaches, rewritten.
#pragma once

#include <string>
#include <vector>

namespace cu2cpp {

struct Invocation {
    std::string input;
    std::string output;
    std::string display_name;               // empty: the input path as given
    std::string depfile;                    // empty: none
    std::vector<std::string> include_dirs;
};

// Writes the output (and OUTPUT.headers/ when local headers are found). Throws RewriteError for a
// problem in the source and std::runtime_error for one with the files.
void translate(const Invocation& invocation);

}  // namespace cu2cpp
