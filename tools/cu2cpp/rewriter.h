// cu2cpp's rewriting of one CUDA source file into C++ that g++ compiles against the simulator:
//   kernel<<<grid, block[, shmem[, stream]]>>>(args...)
//       -> ::mgpu::sim::KernelLauncher< kernel >::launch("kernel", Site{__FILE__, line},
//                                                       ::mgpu::sim::LaunchConfig(grid, block, ...), args...)
//   extern __shared__ T name[];   -> T* const name = <the running block's dynamic shared memory>;
//   __shared__                    -> static
//   __noinline__                  -> __attribute__((noinline))
//   __device__ T name = init;     -> T mgpu_initial_name = init; and a per-device DeviceSymbol,
//   (and __constant__)               mgpu_symbol_name; each later use of `name` becomes
//                                    mgpu_symbol_name.get()
//   #include "local.h"            -> the path the caller maps it to (a rewritten copy)
// Everything else is copied byte for byte, and no line is added or removed after the leading
// #line, so every line of the output stands on the line of the input it came from.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "source_tokens.h"

namespace cu2cpp {

// A problem in the input, reported as "file:line: error: message".
class RewriteError : public std::runtime_error {
public:
    RewriteError(const std::string& file, int line, const std::string& message)
        : std::runtime_error(file + ":" + std::to_string(line) + ": error: " + message) {}
};

struct IncludeDirective {
    std::string name;    // as spelled between the quotes or angle brackets
    bool angled = false;
    int line = 0;
};

struct FileRewrite {
    std::string display_name;        // the name #line and error messages give the file
    bool main_file = true;           // puts the device language's #include first
    std::set<std::string> kernel_templates;   // kernels declared as templates (see collect_kernel_templates)
    std::set<std::string> device_variables;   // declared in the headers this file includes (collect_device_variables)
    std::set<std::string> kernels_with_default_arguments;   // see collect_kernels_with_default_arguments
    // The path to include instead of a local header, or nothing to leave the directive alone.
    std::function<std::optional<std::string>(const IncludeDirective&)> include_target;
};

// Throws RewriteError.
std::string rewrite_source(std::string_view source, const FileRewrite& how);

// Names of __global__ function templates declared in these tokens. A launch that names one of
// them without template arguments lets the compiler deduce them from the arguments, as CUDA does.
void collect_kernel_templates(const std::vector<Token>& tokens, std::set<std::string>& names);

// A `__device__` or `__constant__` variable declaration at namespace scope.
struct DeviceVariableDeclaration {
    std::size_t first = 0;            // its first token
    std::size_t last = 0;             // its `;`
    std::vector<std::size_t> names;   // the token of each declarator's name
    bool constant = false;            // __constant__
    bool is_static = false;
    bool is_extern = false;
    bool is_inline = false;
    bool defines = false;             // a definition, not only an `extern` declaration
};

// Which functions may be called from host code (host_device_calls.cpp): names defined or declared
// as __device__ only, and names defined as host or __host__ __device__ functions.
struct FunctionSides {
    std::set<std::string> device_only;
    std::set<std::string> host_callable;
    std::map<std::string, std::string> signatures;   // "sq(float)", as nvcc names a function
};
void collect_function_sides(const std::vector<Token>& tokens, FunctionSides& sides);

// Throws RewriteError at the first call of a device-only function from a host function's body,
// as nvcc refuses it ("calling a __device__ function(...) from a __host__ function(...)").
void check_host_calls(const std::vector<Token>& tokens, const FunctionSides& sides, const std::string& display_name);

// Per token: whether it stands at namespace scope (outside every class, function and initializer).
std::vector<bool> namespace_scope(const std::vector<Token>& tokens);

// The variable declaration that the __device__ or __constant__ at `at` belongs to; nothing when it
// declares a function, a constexpr or templated variable, or something else the rewriter leaves alone.
std::optional<DeviceVariableDeclaration> read_device_variable(const std::vector<Token>& tokens, std::size_t at);

// Names of the __device__ and __constant__ variables declared at namespace scope in these tokens.
void collect_device_variables(const std::vector<Token>& tokens, std::set<std::string>& names);
// Names of __global__ functions declared with a default argument. Their launches may leave those
// arguments out, so they call the kernel by name (the defaults are part of the declaration, not of
// its address).
void collect_kernels_with_default_arguments(const std::vector<Token>& tokens, std::set<std::string>& names);

// The #include directives of a file that name a header in quotes or angle brackets.
std::vector<IncludeDirective> find_includes(const std::vector<Token>& tokens);

// The text of a C++ string literal holding `text`.
std::string quoted_literal(std::string_view text);

}  // namespace cu2cpp
