// Where an API call or a kernel launch was written in the user's source.
// Every simulated API function takes a defaulted Site as its last parameter, so a
// plain call such as cudaSetDevice(1) records its own file and line without macros.
#pragma once

namespace mgpu::sim {

struct Site {
    const char* file = "";
    int line = 0;

    static constexpr Site here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return Site{file, line};
    }
};

}  // namespace mgpu::sim

// Appended to every simulated API declaration.
#define MGPU_SITE ::mgpu::sim::Site site = ::mgpu::sim::Site::here()
