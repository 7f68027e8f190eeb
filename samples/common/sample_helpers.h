// What the helper headers of CUDA tutorials and NVIDIA's samples do, written for these samples: a
// check that stops at the failing call, defined only when the CUDA runtime's headers came first
// (such headers test the runtime's include guards, __DRIVER_TYPES_H__ and __CUDA_RUNTIME_H__), the
// "waived" exit code of a sample the machine cannot run, and a device chosen by its throughput.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SAMPLE_EXIT_WAIVED 2

#ifdef __DRIVER_TYPES_H__
template <class Result>
void sample_check(Result result, const char* call, const char* file, int line)
{
    if (result == cudaSuccess) return;
    std::fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\"\n", file, line, static_cast<int>(result),
                 cudaGetErrorName(result), call);
    std::exit(EXIT_FAILURE);
}
#define checkSample(call) sample_check((call), #call, __FILE__, __LINE__)

// After a launch: a launch reports its errors through cudaGetLastError only.
inline void sample_last_error(const char* what, const char* file, int line)
{
    const cudaError_t error = cudaGetLastError();
    if (error == cudaSuccess) return;
    std::fprintf(stderr, "%s(%d) : CUDA error : %s : (%d) %s.\n", file, line, what, static_cast<int>(error),
                 cudaGetErrorString(error));
    std::exit(EXIT_FAILURE);
}
#define checkLastSample(what) sample_last_error((what), __FILE__, __LINE__)
#endif

#ifdef __CUDA_RUNTIME_H__
// The device with the most SMs times clock, among those whose compute mode lets a process use them.
inline int sample_fastest_device()
{
    int count = 0;
    checkSample(cudaGetDeviceCount(&count));
    int best = -1;
    unsigned long long best_throughput = 0;
    for (int device = 0; device < count; ++device) {
        int mode = cudaComputeModeDefault, sms = 0, clock_khz = 0;
        checkSample(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device));
        if (mode == cudaComputeModeProhibited) continue;
        checkSample(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        checkSample(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
        const unsigned long long throughput = static_cast<unsigned long long>(sms) * clock_khz;
        if (best < 0 || throughput > best_throughput) {
            best = device;
            best_throughput = throughput;
        }
    }
    if (best < 0) {
        std::fprintf(stderr, "every device is in prohibited compute mode\n");
        std::exit(EXIT_FAILURE);
    }
    return best;
}
#endif
