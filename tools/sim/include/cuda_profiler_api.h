// CUDA's cuda_profiler_api.h. There is no profiler to start on the simulated machine (its trace
// records every call from the start anyway), so both calls succeed and change nothing, as they do
// on a real GPU when no profiler is attached.
#pragma once
#define __CUDA_PROFILER_API_H__

#include "cuda_runtime_api.h"

cudaError_t cudaProfilerStart(MGPU_SITE);
cudaError_t cudaProfilerStop(MGPU_SITE);
