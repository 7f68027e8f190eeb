// Lesson 2, splitting work across GPUs: the functions you write in split_work.cu.
// The checker calls each of them on several simulated machines; do not change this file.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>

// One device's part of an array: the elements [first, first + count).
struct Share {
    std::size_t first = 0;
    std::size_t count = 0;
};

// Task 1 (each task is numbered the same way in split_work.cu). Splits n elements into `parts` shares
// that follow each other in order from element 0: each gets n / parts elements, and the first n % parts
// shares one more. Empty when parts <= 0. Shares may be empty when n < parts. n may be any
// std::size_t, 2^32 and beyond included (section 2.2: count in std::size_t).
std::vector<Share> plan_even_split(std::size_t n, int parts);

// Task 2. Splits n elements into one share per weight, in order from element 0, each count within one
// element of n * weight / (sum of weights), the counts adding up to n exactly. A weight of 0 gets an
// empty share. Empty when `weights` is empty, has a negative weight or adds up to 0.
std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights);

// Task 3. Host memory for n floats that the devices copy to and from without holding up the host
// (page-locked); nullptr for n = 0 or when it cannot be had, leaving no error behind. Meant to be
// allocated once and used for many runs. free_host_buffer gives it back (nullptr is fine).
float* allocate_host_buffer(std::size_t n);
void free_host_buffer(float* buffer);

// Tasks 4 and 6. out[i] = factor * in[i] for every element of every share, share d computed on
// device d, all of it driven from the calling host thread. `in` and `out` are host memory holding the
// plan's elements (page-locked ones let the devices work at the same time); it copies straight from
// and to them and pins no host memory of its own (section 2.6: pin once, outside the work). Returns
// when every device is done; releases everything it made on every path and gives the caller's
// current device back. With `device_ms` not null it is resized to plan.size() and every entry is
// written, whatever the vector held before: entry d is the time device d spent on its share (input
// copy, kernel, output copy) in milliseconds, measured with events on that device, and 0 for an
// empty share. A plan with more shares than devices returns
// cudaErrorInvalidValue.
cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms);

// Task 5. The same result with one host thread per non-empty share: share d's thread drives device d.
// The threads may be std::threads or an OpenMP team, whose thread 0 is the calling thread itself;
// either way the caller's current device is the same afterwards. Every thread is started before the
// first is joined, so that the devices work on their shares at the same time (a join right after
// each start makes them take turns). Any stream of device d will do, the legacy default stream included. A plan with more shares than devices returns cudaErrorInvalidValue
// before any thread starts. The threads run at the same time: a status or anything else they share is
// written under a lock, or into a slot of each thread's own made before the threads start; the grader
// runs the threads under a race detector. Returns when every thread has finished; the first error any
// of them met, else cudaSuccess.
cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan);
