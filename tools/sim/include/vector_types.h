// CUDA's vector_types.h: dim3 and uint3.
#pragma once

#include "mgpu/sim/types.h"
