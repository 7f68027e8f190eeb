// CUDA's driver_types.h: error codes, handles, device properties and flags.
#pragma once
#define __DRIVER_TYPES_H__

#include "mgpu/sim/api_types.h"
#include "mgpu/sim/types.h"
