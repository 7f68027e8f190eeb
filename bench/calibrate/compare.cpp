// `mgpu bench calibrate`: runs calibrate.cu (with the reference solution of lesson 3) on the GPU
// and on the simulator's h200 preset, prints each measurement as real ms, modelled ms and their
// ratio (modelled / real), then the reference solution's hot paths against the ceilings the same
// real run measured. --out FILE writes the same as a markdown table.
//
// Both runs use calibrate's --small sizes (64 MiB host copies, 256 MiB on the device) unless
// --full asks for its full sizes (256 MiB and 1 GiB): both are far past launch and latency costs
// on the GPU; the small ones keep the simulator's run under a minute.
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Measurement {
    std::size_t bytes = 0;
    double ms = 0;
};

struct Run {
    bool ok = false;
    std::string output;
    std::vector<std::string> order;
    std::map<std::string, Measurement> by_name;
};

Run run_calibration(const std::string& command) {
    Run run;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen((command + " 2>&1").c_str(), "r"), ::pclose);
    if (!pipe) return run;
    std::array<char, 4096> buffer{};
    while (std::fgets(buffer.data(), buffer.size(), pipe.get())) run.output += buffer.data();
    const int status = ::pclose(pipe.release());
    std::istringstream lines(run.output);
    std::string line;
    bool done = false;
    while (std::getline(lines, line)) {
        char name[128];
        std::size_t bytes = 0;
        double ms = 0;
        if (std::sscanf(line.c_str(), "calib %127s bytes=%zu ms=%lf", name, &bytes, &ms) == 3) {
            if (!run.by_name.count(name)) run.order.push_back(name);
            run.by_name[name] = {bytes, ms};
        }
        done = done || line == "calib-done";
    }
    run.ok = done && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return run;
}

std::string capture(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen((command + " 2>/dev/null").c_str(), "r"), ::pclose);
    std::string text;
    if (!pipe) return text;
    std::array<char, 512> buffer{};
    while (std::fgets(buffer.data(), buffer.size(), pipe.get())) text += buffer.data();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

double gbps(std::size_t bytes, double ms) { return ms > 0 ? double(bytes) / (ms * 1e6) : 0; }

// Host costs that the driver's own state moves by more than the band allows. On one H200 the same
// repeated cudaMalloc + cudaFree took 385-956 us at 1 GiB as the median of different processes
// (bench/results/h200-calibration.md); no single model can be within 0.8-1.25 of all of them. They
// are printed with their ratio, marked, and not counted in the verdict.
bool varies_between_processes(const std::string& name) {
    return name == "malloc-free" || name == "malloc-free-16MiB";
}

// Host-cost rows whose value differed by more than 1.4x between two H200 machines (the band,
// 1.25 / 0.8, is 1.56x wide; bench/results/h200-host-costs.md has both): launches, the host time of
// most calls, pageable copies of 1 MiB and more (the host's memcpy and page pinning), small
// device-to-device copies and memsets, and page-locking. The model sits between the two machines;
// these rows are printed with their ratio as information and not counted.
bool varies_between_machines(const std::string& name) {
    static const char* const kRows[] = {
        "d2d-4KiB",
        "d2d-64KiB",
        "memset-64KiB",
        "d2d-256KiB",
        "memset-256KiB",
        "d2d-1MiB",
        "memset-1MiB",
        "launch-back-to-back",
        "host-launch-call",
        "host-event-record-call",
        "host-memcpy-d2d-4KiB",
        "host-memset-4KiB",
        "host-async-h2d-pinned-4KiB",
        "host-async-h2d-pageable-4KiB",
        "host-async-d2h-pinned-4KiB",
        "host-memcpy-d2h-pageable-1MiB",
        "host-memcpy-d2d-1MiB",
        "host-memset-1MiB",
        "host-async-h2d-pinned-1MiB",
        "host-async-h2d-pageable-1MiB",
        "host-async-d2h-pinned-1MiB",
        "host-async-d2h-pageable-1MiB",
        "host-async-h2d-pinned-256MiB",
        "host-async-h2d-pageable-256MiB",
        // 13.7-18.6 ms on those two machines, 22.1 ms in h200-calibration.md's run of the day before.
        "host-async-d2h-pageable-256MiB",
        "host-async-d2h-pinned-256MiB",
        "host-memset-256MiB",
        "host-async-h2d-pinned-256MiB-behind-work",
        "host-async-h2d-pageable-256MiB-behind-work",
        "host-mallochost-4MiB",
        "host-freehost-4MiB",
        "host-hostalloc-portable-4MiB",
        "host-hostregister-4MiB",
        "host-mallochost-64MiB",
        "host-freehost-64MiB",
        "host-hostalloc-portable-64MiB",
        "host-hostregister-64MiB",
        "host-mallochost-256MiB",
        "host-freehost-256MiB",
        "host-hostalloc-portable-256MiB",
        "host-hostregister-256MiB",
        "host-hostunregister-256MiB",
    };
    for (const char* row : kRows)
        if (name == row) return true;
    return false;
}

// Writes the tables to `path` when one was asked for; false when it cannot be written.
bool write_markdown(const std::string& path, const std::string& text) {
    if (path.empty()) return true;
    std::ofstream file(path);
    file << text;
    if (!file) {
        std::cerr << "cannot write " << path << "\n";
        return false;
    }
    std::cout << "wrote " << path << "\n";
    return true;
}

struct Figure {
    std::string name, measured, ceiling, target;
    bool pass = false;
};

}  // namespace

int main(int argc, char** argv) {
    std::string size_flag = " --small";
    std::string out_path, cuda_program = MGPU_CALIBRATE_CUDA, sim_program = MGPU_CALIBRATE_SIM;
    // --host-costs compares bench/host_costs instead: host time per call and small operations, with
    // no reference solution and no sizes to choose.
    bool host_costs = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--host-costs") {
            host_costs = true;
            size_flag = "";
            cuda_program = MGPU_HOST_COSTS_CUDA;
            sim_program = MGPU_HOST_COSTS_SIM;
        } else if (arg == "--out" && i + 1 < argc) out_path = argv[++i];
        else if (arg.rfind("--out=", 0) == 0) out_path = arg.substr(6);
        else if (arg == "--full" && !host_costs) size_flag = "";
        else if (arg == "--cuda-program" && i + 1 < argc) cuda_program = argv[++i];
        else if (arg == "--sim-program" && i + 1 < argc) sim_program = argv[++i];
        else {
            std::cerr << "usage: bench-calibrate [--host-costs | --full] [--out FILE.md] [--cuda-program PATH] [--sim-program PATH]\n";
            return 2;
        }
    }
    if (cuda_program.empty()) {
        std::cerr << "bench calibrate: the GPU side was not built (the kit was configured without nvcc); "
                     "configure on a machine with the CUDA Toolkit.\n";
        return 4;
    }

    std::cout << "running " << cuda_program << size_flag << " on the GPU ...\n" << std::flush;
    Run real = run_calibration("'" + cuda_program + "'" + size_flag);
    if (!real.ok) {
        std::cerr << "bench calibrate: the GPU run did not finish; its output:\n" << real.output;
        return 4;
    }
    std::cout << "running " << sim_program << size_flag << " on the simulator (MGPU_TOPOLOGY=h200) ...\n" << std::flush;
    Run model = run_calibration("MGPU_TOPOLOGY=h200 '" + sim_program + "'" + size_flag);
    if (!model.ok) std::cerr << "bench calibrate: the simulator run did not finish; its output:\n" << model.output;

    const std::string gpu = capture("nvidia-smi --query-gpu=name --format=csv,noheader | head -1");
    const std::string driver = capture("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1");
    const std::string cuda = capture("nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1");
    const std::string nvcc = capture("nvcc --version | tail -2 | head -1");
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));

    std::ostringstream md;
    md << "| GPU | driver | CUDA (driver) | toolkit | date |\n|---|---|---|---|---|\n"
       << "| " << gpu << " | " << driver << " | " << cuda << " | " << nvcc << " | " << date << " |\n\n";
    md << "| measurement | bytes | real ms | modelled ms | ratio (model / real) |\n|---|---:|---:|---:|---:|\n";
    std::cout << "\n" << gpu << ", driver " << driver << ", " << cuda << ", " << date << "\n";
    std::printf("%-24s %12s %12s %12s %8s\n", "measurement", "bytes", "real ms", "model ms", "ratio");
    bool ratios_in_band = model.ok;
    bool any_information_row = false;
    for (const auto& name : real.order) {
        const Measurement r = real.by_name[name];
        const bool has_model = model.by_name.count(name) != 0;
        const Measurement m = has_model ? model.by_name[name] : Measurement{};
        const double ratio = has_model && r.ms > 0 ? m.ms / r.ms : 0;
        const bool in_band = ratio >= 0.8 && ratio <= 1.25;
        const bool information_only = varies_between_processes(name) || (host_costs && varies_between_machines(name));
        any_information_row = any_information_row || information_only;
        if (!information_only) ratios_in_band = ratios_in_band && in_band;
        const char* remark = information_only ? (host_costs ? "  (varies between machines: information)"
                                                            : "  (varies between processes: information)")
                             : has_model && !in_band ? "  (outside 0.8-1.25)"
                                                     : "";
        std::printf("%-24s %12zu %12.4f %12s %8s%s\n", name.c_str(), r.bytes, r.ms,
                    has_model ? fixed(m.ms, 4).c_str() : "-", has_model ? fixed(ratio, 3).c_str() : "-", remark);
        md << "| " << name << (information_only ? " (information)" : "") << " | " << r.bytes << " | " << fixed(r.ms, 4)
           << " | " << (has_model ? fixed(m.ms, 4) : "-") << " | " << (has_model ? fixed(ratio, 3) : "-") << " |\n";
    }

    if (host_costs) {
        std::cout << (ratios_in_band ? "every ratio is within 0.8-1.25" : "some ratios are outside 0.8-1.25")
                  << (any_information_row ? " (rows marked information not counted)\n" : "\n");
        if (!write_markdown(out_path, md.str())) return 4;
        return ratios_in_band ? 0 : 1;
    }

    // The reference solution's hot paths against the hardware's ceilings, all from the GPU run.
    auto get = [&](const char* name) { return real.by_name.count(name) ? real.by_name[name] : Measurement{}; };
    const Measurement copy = get("solution-copy"), memcpy_plain = get("plain-memcpy"), scale = get("solution-scale"),
                      pipeline = get("solution-pipeline"), d2d = get("d2d"), kernel = get("scale-kernel");
    std::vector<Figure> figures;
    // The function returns a finished copy, so the like-for-like ceiling is cudaMemcpy followed by
    // cudaDeviceSynchronize; the bare cudaMemcpy is shown beside it.
    const Measurement memcpy_complete = get("plain-memcpy-complete");
    const double copy_fraction = copy.ms > 0 ? memcpy_complete.ms / copy.ms : 0;
    figures.push_back({"copy_between_devices (same device)", fixed(copy.ms, 4) + " ms",
                       "cudaMemcpy + cudaDeviceSynchronize " + fixed(memcpy_complete.ms, 4) + " ms (bare cudaMemcpy " +
                           fixed(memcpy_plain.ms, 4) + " ms)",
                       "within 10% (>= 0.909 of its speed; got " + fixed(copy_fraction, 3) + ")", copy_fraction >= 1 / 1.1});
    // Device-to-device copy bandwidth counts bytes read plus bytes written, as the kernel's does.
    const double d2d_bw = gbps(2 * d2d.bytes, d2d.ms), scale_bw = gbps(scale.bytes, scale.ms);
    figures.push_back({"scale_from_peer kernel (same device)", fixed(scale_bw, 0) + " GB/s (read + write)",
                       "d2d copy " + fixed(d2d_bw, 0) + " GB/s (read + write)", "within 20% (>= 0.8)",
                       d2d_bw > 0 && scale_bw >= 0.8 * d2d_bw});
    // The pipeline moves each element twice (the chunk copy: read + write; the kernel: read +
    // write). Copies and kernels can overlap in time only where they use different resources; on
    // one device both run on the same memory, so the ideal is the total traffic at the measured
    // device-to-device bandwidth: (copy bytes + kernel bytes) / d2d bandwidth.
    const double pipeline_bytes = 2.0 * double(pipeline.bytes);
    const double ideal_ms = d2d_bw > 0 ? pipeline_bytes / (d2d_bw * 1e6) : 0;
    const double overlap = pipeline.ms > 0 ? ideal_ms / pipeline.ms : 0;
    figures.push_back({"pipelined_scale (same device)", fixed(pipeline.ms, 4) + " ms",
                       "ideal " + fixed(ideal_ms, 4) + " ms = (copy + kernel bytes) / d2d bandwidth",
                       "at least 80% of ideal (got " + fixed(100 * overlap, 1) + "%)", overlap >= 0.8});
    // The same work without chunks, measured in the same rounds: what the pipeline's streams, event
    // and launches cost on one device, where there is nothing for them to hide.
    const Measurement unpipelined = get("copy-then-scale");
    figures.push_back({"pipelined_scale against copy, then scale", fixed(pipeline.ms, 4) + " ms",
                       "copy_between_devices + scale_from_peer " + fixed(unpipelined.ms, 4) + " ms",
                       "information (unpipelined / pipelined = " +
                           fixed(pipeline.ms > 0 ? unpipelined.ms / pipeline.ms : 0, 3) + ")",
                       true});
    const Measurement alone_k = get("overlap-kernels-alone"), alone_c = get("overlap-copies-alone"),
                      together = get("overlap-together");
    const double ideal_overlap = std::max(alone_k.ms, alone_c.ms);
    figures.push_back({"copy/compute overlap (calibrate, 2 streams)", fixed(together.ms, 4) + " ms",
                       "ideal max(kernels, copies) = " + fixed(ideal_overlap, 4) + " ms",
                       "information (ideal / together = " + fixed(together.ms > 0 ? ideal_overlap / together.ms : 0, 3) + ")",
                       true});
    // Kernels and copies inside one GPU's memory share its bandwidth: the simulator books both on
    // one memory timeline, which is right when this is near the sum of the two alone.
    const Measurement beside = get("d2d-beside-kernel");
    const double sum_alone = d2d.ms + kernel.ms;
    figures.push_back({"d2d copy beside a kernel (2 streams)", fixed(beside.ms, 4) + " ms",
                       "alone: d2d " + fixed(d2d.ms, 4) + " + kernel " + fixed(kernel.ms, 4) + " = " + fixed(sum_alone, 4) + " ms",
                       "information (together / sum = " + fixed(sum_alone > 0 ? beside.ms / sum_alone : 0, 3) + ")",
                       true});

    std::cout << "\nReference solution against the hardware (GPU run):\n";
    md << "\n| hot path | measured | ceiling | target | result |\n|---|---|---|---|---|\n";
    bool all_pass = true;
    for (const auto& f : figures) {
        std::printf("  %-44s %-26s %-58s %-40s %s\n", f.name.c_str(), f.measured.c_str(), f.ceiling.c_str(),
                    f.target.c_str(), f.pass ? "PASS" : "MISS");
        md << "| " << f.name << " | " << f.measured << " | " << f.ceiling << " | " << f.target << " | "
           << (f.pass ? "PASS" : "MISS") << " |\n";
        all_pass = all_pass && f.pass;
    }
    std::cout << (ratios_in_band ? "every ratio is within 0.8-1.25" : "some ratios are outside 0.8-1.25")
              << (any_information_row ? " (rows marked information not counted)\n" : "\n");
    if (!write_markdown(out_path, md.str())) return 4;
    return all_pass && ratios_in_band ? 0 : 1;
}
