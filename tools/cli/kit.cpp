#include "kit.h"

#include "kit_config.h"

namespace mgpu::cli {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> words;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) words.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

Kit Kit::configured() {
    return Kit{MGPU_SOURCE_ROOT, MGPU_BUILD_ROOT};
}

std::vector<std::string> Kit::compiler() const { return split_list(MGPU_CXX); }

std::vector<std::filesystem::path> Kit::sim_libraries() const {
    std::vector<std::filesystem::path> paths;
    for (const auto& word : split_list(MGPU_SIM_LIBRARIES)) paths.emplace_back(word);
    return paths;
}

std::vector<std::string> Kit::sim_link_flags() const { return split_list(MGPU_SIM_LINK_FLAGS); }

std::filesystem::path Kit::cu2cpp() const { return MGPU_CU2CPP; }
std::filesystem::path Kit::cuda_prelude() const { return MGPU_CUDA_PRELUDE; }

std::filesystem::path Kit::bench_sim() const { return MGPU_BENCH_SIM; }

std::vector<std::string> Kit::gpu_nvcc() const { return split_list(MGPU_GPU_NVCC); }
std::vector<std::string> Kit::gpu_nvcc_flags() const { return split_list(MGPU_GPU_NVCC_FLAGS); }
std::vector<std::filesystem::path> Kit::gpu_libraries() const {
    std::vector<std::filesystem::path> paths;
    for (const auto& word : split_list(MGPU_GPU_LIBRARIES)) paths.emplace_back(word);
    return paths;
}
std::vector<std::string> Kit::gpu_link_flags() const { return split_list(MGPU_GPU_LINK_FLAGS); }

}  // namespace mgpu::cli
