#include "validate_p2p_figures.h"

#include <cstdio>
#include <sstream>

namespace mgpu::cli {

P2pRun parse_p2p_output(const std::string& text) {
    P2pRun run;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line == "p2p-done") {
            run.finished = true;
            continue;
        }
        if (line.rfind("p2p note ", 0) == 0) {
            run.notes.push_back(line.substr(9));
            continue;
        }
        int count = 0, src = 0, dst = 0, flag = 0;
        if (std::sscanf(line.c_str(), "p2p devices count=%d", &count) == 1) {
            run.devices = count;
            continue;
        }
        if (std::sscanf(line.c_str(), "p2p access src=%d dst=%d can=%d", &src, &dst, &flag) == 3) {
            run.access[{src, dst}] = flag == 1;
            continue;
        }
        char kind[64];
        std::size_t bytes = 0;
        double ms = 0;
        if (std::sscanf(line.c_str(), "p2p %63s src=%d dst=%d p2p=%d bytes=%zu ms=%lf", kind, &src, &dst, &flag, &bytes,
                        &ms) == 6)
            run.figures.push_back({kind, src, dst, flag, bytes, ms});
    }
    return run;
}

const P2pFigure* find_figure(const P2pRun& run, const std::string& kind, int src, int dst, int p2p) {
    for (const auto& figure : run.figures)
        if (figure.kind == kind && figure.src == src && figure.dst == dst && figure.p2p == p2p) return &figure;
    return nullptr;
}

double gigabytes_per_second(std::size_t bytes, double ms) {
    return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) / 1e9 : 0;
}

double shown_value(const P2pFigure& figure) {
    if (figure.kind == "lat") return figure.ms * 1000.0;
    if (figure.kind == "uni" || figure.kind == "bi") return gigabytes_per_second(figure.bytes, figure.ms);
    return figure.ms;
}

const char* shown_unit(const std::string& kind) {
    if (kind == "lat") return "us";
    if (kind == "uni" || kind == "bi") return "GB/s";
    return "ms";
}

double model_ratio(const P2pFigure& real, const P2pFigure& model) {
    const double measured = shown_value(real);
    return measured > 0 ? shown_value(model) / measured : 0;
}

std::optional<double> solution_copy_ratio(const P2pRun& run) {
    const P2pFigure* solution = nullptr;
    const P2pFigure* runtime = nullptr;
    for (const auto& figure : run.figures) {
        if (figure.kind == "solution-copy") solution = &figure;
        if (figure.kind == "memcpy-peer-async") runtime = &figure;
    }
    if (solution == nullptr || runtime == nullptr || solution->ms <= 0) return std::nullopt;
    return runtime->ms / solution->ms;
}

}  // namespace mgpu::cli
