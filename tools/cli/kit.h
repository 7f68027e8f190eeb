// The kit a command works on: its source tree, its build tree and the tools meson built there.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mgpu::cli {

struct Kit {
    std::filesystem::path root;   // the source tree (holds exercises/, tools/, ...)
    std::filesystem::path build;  // the meson build tree the CLI was built in

    // The kit as configured; `root` is replaced by the --kit-root the bootstrap passes.
    static Kit configured();

    std::vector<std::string> compiler() const;           // e.g. {"c++"}
    std::vector<std::filesystem::path> sim_libraries() const;
    std::vector<std::string> sim_link_flags() const;
    std::filesystem::path cu2cpp() const;               // empty when the rewriter is not part of the build
    std::filesystem::path cuda_prelude() const;         // cuda_runtime.h and the rewriter's headers, precompiled
    std::filesystem::path bench_sim() const;
    // timeline --backend cuda (all empty when the kit was configured without nvcc and CUPTI).
    std::vector<std::string> gpu_nvcc() const;
    std::vector<std::string> gpu_nvcc_flags() const;
    std::vector<std::filesystem::path> gpu_libraries() const;
    std::vector<std::string> gpu_link_flags() const;
    std::filesystem::path run_cache() const { return build / "run-cache"; }
};

// Splits a ';'-separated list from the generated configuration; empty words are dropped.
std::vector<std::string> split_list(const std::string& text);

}  // namespace mgpu::cli
