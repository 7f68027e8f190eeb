// Part e: NCCL all-reduce bandwidth. Not measured yet: the kit has no all-reduce program to run
// (lesson 4, NCCL, is not written), so the part says so and counts neither way.
#include "validate_parts.h"

namespace mgpu::cli {

void report_nccl(ValidationReport& report, const ValidateRun&) {
    report.section("NCCL all-reduce (algbw, busbw)");
    report.verdict(Verdict::NotTestable, "NCCL all-reduce algbw / busbw", "not measured yet: no all-reduce program");
}

}  // namespace mgpu::cli
