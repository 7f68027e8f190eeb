// The parts of `validate`, in the order it runs them; each adds its sections and verdicts to
// the report.
#pragma once

#include "validate_report.h"
#include "validate_support.h"

namespace mgpu::cli {

void report_machine(ValidationReport& report, const ValidateRun& run);        // validate_machine.cpp
void compare_conformance(ValidationReport& report, const ValidateRun& run);   // validate_conformance.cpp
void grade_known_answers(ValidationReport& report, const ValidateRun& run);   // validate_grading.cpp
void compare_p2p_matrix(ValidationReport& report, const ValidateRun& run);    // validate_p2p.cpp
void report_nccl(ValidationReport& report, const ValidateRun& run);           // validate_nccl.cpp

}  // namespace mgpu::cli
