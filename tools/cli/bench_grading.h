// `bench grading`: how fast a class is graded with one job and with two.
#pragma once

#include "args.h"
#include "kit.h"

namespace mgpu::cli {

int run_grading_bench(const Kit& kit, const ParsedArgs& args);

}  // namespace mgpu::cli
