// CUDA's device_launch_parameters.h: threadIdx, blockIdx, blockDim, gridDim come with the runtime.
#pragma once

#include "cuda_runtime.h"
