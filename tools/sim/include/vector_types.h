// CUDA's vector_types.h: dim3 and uint3 (from the simulator's types), and the built-in vector types
// with the sizes and alignments nvcc gives them, so that a float4 load in a kernel is one 16-byte
// access on the GPU and the same layout here.
#pragma once
#define __VECTOR_TYPES_H__

#include "mgpu/sim/types.h"

#define MGPU_SIM_VECTOR2(type, name, align) \
    struct alignas(align) name {            \
        type x, y;                          \
    }
#define MGPU_SIM_VECTOR3(type, name) \
    struct name {                    \
        type x, y, z;                \
    }
#define MGPU_SIM_VECTOR4(type, name, align) \
    struct alignas(align) name {            \
        type x, y, z, w;                    \
    }

MGPU_SIM_VECTOR2(char, char2, 2);
MGPU_SIM_VECTOR4(char, char4, 4);
MGPU_SIM_VECTOR2(unsigned char, uchar2, 2);
MGPU_SIM_VECTOR4(unsigned char, uchar4, 4);
MGPU_SIM_VECTOR2(short, short2, 4);
MGPU_SIM_VECTOR4(short, short4, 8);
MGPU_SIM_VECTOR2(unsigned short, ushort2, 4);
MGPU_SIM_VECTOR4(unsigned short, ushort4, 8);
MGPU_SIM_VECTOR2(int, int2, 8);
MGPU_SIM_VECTOR3(int, int3);
MGPU_SIM_VECTOR4(int, int4, 16);
MGPU_SIM_VECTOR2(unsigned int, uint2, 8);
MGPU_SIM_VECTOR4(unsigned int, uint4, 16);
MGPU_SIM_VECTOR2(long long, longlong2, 16);
MGPU_SIM_VECTOR2(unsigned long long, ulonglong2, 16);
MGPU_SIM_VECTOR2(float, float2, 8);
MGPU_SIM_VECTOR3(float, float3);
MGPU_SIM_VECTOR4(float, float4, 16);
MGPU_SIM_VECTOR2(double, double2, 16);
MGPU_SIM_VECTOR3(double, double3);

#undef MGPU_SIM_VECTOR2
#undef MGPU_SIM_VECTOR3
#undef MGPU_SIM_VECTOR4

static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 is one 16-byte access, as on the GPU");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 is one 8-byte access, as on the GPU");
