// Part e: NCCL all-reduce bandwidth, measured only where lesson 4 (NCCL) exists. Its figures
// follow nccl-tests: algbw = bytes / time, busbw = algbw * 2(n-1)/n.
#include "lessons.h"
#include "validate_parts.h"

namespace mgpu::cli {

void report_nccl(ValidationReport& report, const ValidateRun& run) {
    report.section("NCCL all-reduce (algbw, busbw)");
    report.line("NCCL_NVLS_ENABLE=0 is set for every program validate runs.");
    constexpr int kNcclLesson = 4;
    if (!lesson_folder(run.kit.root / "solutions", kNcclLesson)) {
        report.verdict(Verdict::NotTestable, "NCCL all-reduce algbw / busbw",
                       "not measured: lesson 4 (NCCL) does not exist in this kit yet, and the measurement runs "
                       "its solution");
        return;
    }
    report.verdict(Verdict::NotBuilt, "NCCL all-reduce algbw / busbw",
                   "lesson 4 exists, but this build of validate has no all-reduce program to run for it");
}

}  // namespace mgpu::cli
