// What `kernel<<<grid, block, shmem, stream>>>(args...)` becomes after cu2cpp:
//
//   ::mgpu::sim::KernelLauncher< kernel >::launch("kernel", Site{file, line},
//                                                ::mgpu::sim::LaunchConfig(grid, block, shmem, stream), args...)
//
// The kernel is a template argument, so each launch site gets its own thread loop with the
// kernel body inlined into it. launch() takes exactly the kernel's parameter types, so the
// arguments are converted as in a call of the kernel (0 and NULL become null pointers, braced
// lists build structs) and copied, as CUDA copies them at launch: changing a host variable
// after the launch does not change what the kernel sees.
//
// A kernel template launched without its template arguments (`scale<<<g, b>>>(p, 2.0f)` with
// `template <class T> __global__ void scale(T*, T)`) has no single address, so cu2cpp emits
// launch_deduced_kernel with a lambda that calls it; the arguments are then stored with their
// own (decayed) types and the template is deduced from those, as CUDA deduces it.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "mgpu/sim/block_execution.h"
#include "mgpu/sim/kernel_submit.h"
#include "mgpu/sim/site.h"
#include "mgpu/sim/types.h"

namespace mgpu::sim {

// The <<<...>>> part. A grid or block may be given as a number, a dim3 or a uint3; a missing
// shared memory size is 0 and a missing stream the default stream, as in CUDA.
struct LaunchConfig {
    dim3 grid;
    dim3 block;
    std::size_t dynamic_shared;
    cudaStream_t stream;

    LaunchConfig(dim3 grid_size, dim3 block_size, std::size_t dynamic_shared_bytes = 0,
                 cudaStream_t launch_stream = nullptr)
        : grid(grid_size), block(block_size), dynamic_shared(dynamic_shared_bytes), stream(launch_stream) {}
};

// Launches name stream 0 as the per-thread default stream in files compiled as
// `nvcc --default-stream per-thread` compiles them (that option defines this macro). The choice
// is a template argument, so files compiled either way never share a launch function.
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define MGPU_PER_THREAD_DEFAULT_STREAM_ true
#else
#define MGPU_PER_THREAD_DEFAULT_STREAM_ false
#endif

cudaError_t submit_kernel_per_thread_default_stream(KernelLaunch&& launch);

namespace kernel {

template <auto Kernel>
struct CallKernel {
    template <class... Values>
    [[gnu::always_inline]] void operator()(Values&... values) const {
        Kernel(values...);
    }
};

template <class Value>
void collect_argument(KernelLaunch& launch, const Value& value) {
    if constexpr (std::is_pointer_v<Value> && !std::is_function_v<std::remove_pointer_t<Value>>) {
        using Pointee = std::remove_pointer_t<Value>;
        // Through const volatile void*: a `volatile int*` flag the host writes while the kernel polls
        // it is a pointer argument like any other.
        launch.pointer_args.push_back(const_cast<const void*>(static_cast<const volatile void*>(value)));
        if constexpr (std::is_void_v<std::remove_cv_t<Pointee>>)
            launch.pointee_sizes.push_back(1);
        else
            launch.pointee_sizes.push_back(sizeof(Pointee));
        launch.pointer_writable.push_back(!std::is_const_v<Pointee>);
        launch.pointer_volatile.push_back(std::is_volatile_v<Pointee>);
    } else if constexpr (std::is_integral_v<Value> && !std::is_same_v<Value, bool>) {
        if (value > 0 && static_cast<unsigned long long>(value) > launch.largest_count)
            launch.largest_count = static_cast<unsigned long long>(value);
    }
}

// Body: default-constructible callable that runs the kernel for the current thread.
// Values: the stored argument types (the kernel's parameter types, or decayed argument types).
// function: the kernel's address where it has one (cudaFuncSetAttribute names kernels by it).
template <bool PerThreadDefaultStream, class Body, class... Values>
void submit_launch(const char* name, const void* function, Site site, const LaunchConfig& config, Values... values) {
    KernelLaunch launch;
    launch.name = name;
    launch.function = function;
    launch.grid = config.grid;
    launch.block = config.block;
    launch.dynamic_shared = config.dynamic_shared;
    launch.stream = config.stream;
    launch.site = site;
    (collect_argument(launch, values), ...);

    using Stored = std::tuple<Values...>;
    GridShape shape{name, site, config.grid, config.block, config.dynamic_shared};
    launch.run_grid = [shape, stored = Stored(std::move(values)...)]() mutable {
        run_grid(shape, &run_threads<Body, Stored>, &stored);
    };
    // The launch's own result is what cudaGetLastError reports; a launch expression has none.
    if constexpr (PerThreadDefaultStream)
        (void)submit_kernel_per_thread_default_stream(std::move(launch));
    else
        (void)submit_kernel(std::move(launch));
}

template <class>
inline constexpr bool kAlwaysFalse = false;

}  // namespace kernel

template <auto Kernel, bool PerThreadDefaultStream = MGPU_PER_THREAD_DEFAULT_STREAM_>
struct KernelLauncher {
    static_assert(kernel::kAlwaysFalse<decltype(Kernel)>,
                  "only a __global__ function returning void can be launched with <<<...>>>");
};

template <class... Params, void (*Kernel)(Params...), bool PerThreadDefaultStream>
struct KernelLauncher<Kernel, PerThreadDefaultStream> {
    static void launch(const char* name, Site site, const LaunchConfig& config, Params... params) {
        kernel::submit_launch<PerThreadDefaultStream, kernel::CallKernel<Kernel>, Params...>(
            name, reinterpret_cast<const void*>(Kernel), site, config, std::move(params)...);
    }
};

template <class... Params, void (*Kernel)(Params...) noexcept, bool PerThreadDefaultStream>
struct KernelLauncher<Kernel, PerThreadDefaultStream> {
    static void launch(const char* name, Site site, const LaunchConfig& config, Params... params) {
        kernel::submit_launch<PerThreadDefaultStream, kernel::CallKernel<Kernel>, Params...>(
            name, reinterpret_cast<const void*>(Kernel), site, config, std::move(params)...);
    }
};

namespace kernel {

template <class Function>
struct KernelParameters;
template <class... Params>
struct KernelParameters<void (*)(Params...)> {
    using type = std::tuple<Params...>;
};
template <class... Params>
struct KernelParameters<void (*)(Params...) noexcept> {
    using type = std::tuple<Params...>;
};

// An argument is stored as the parameter it is passed to, as CUDA copies it at the launch (an
// `int*` given for a `volatile int*` is polled as volatile); one that does not convert keeps its
// own type, so that the call by name reports the mismatch at the launch's line.
template <class Arg, class Param>
using StoredArgument = std::conditional_t<std::is_convertible_v<Arg, std::decay_t<Param>>, std::decay_t<Param>,
                                          std::decay_t<Arg>>;

}  // namespace kernel

// A kernel declared with default arguments (`__global__ void delay(volatile int* flag,
// unsigned long long timeout = 10000000)` launched as `delay<<<1, 1, 0, s>>>(flag)`): its address
// alone does not carry the defaults, so cu2cpp emits a lambda that calls it by name, as for a
// template, and passes the address for its parameter types and for the calls that name kernels by
// it (cudaFuncSetAttribute).
template <class Function, class CallByName, class... Args, bool PerThreadDefaultStream = MGPU_PER_THREAD_DEFAULT_STREAM_>
void launch_kernel_with_default_arguments(const char* name, Site site, Function function, const LaunchConfig& config,
                                          CallByName, Args&&... args) {
    using Params = typename kernel::KernelParameters<Function>::type;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        kernel::submit_launch<PerThreadDefaultStream, CallByName,
                              kernel::StoredArgument<Args, std::tuple_element_t<I, Params>>...>(
            name, reinterpret_cast<const void*>(function), site, config,
            kernel::StoredArgument<Args, std::tuple_element_t<I, Params>>(std::forward<Args>(args))...);
    }(std::index_sequence_for<Args...>{});
}

template <class CallTemplate, class... Args, bool PerThreadDefaultStream = MGPU_PER_THREAD_DEFAULT_STREAM_>
void launch_deduced_kernel(const char* name, Site site, const LaunchConfig& config, CallTemplate, Args&&... args) {
    kernel::submit_launch<PerThreadDefaultStream, CallTemplate, std::decay_t<Args>...>(
        name, nullptr, site, config, std::decay_t<Args>(std::forward<Args>(args))...);
}

}  // namespace mgpu::sim
