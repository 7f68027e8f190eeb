// CUDA's device_launch_parameters.h: threadIdx, blockIdx, blockDim, gridDim come with the runtime.
#pragma once
#define __DEVICE_LAUNCH_PARAMETERS_H__

#include "cuda_runtime.h"
