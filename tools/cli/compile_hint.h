// One line of advice for a failed build, read off what the compiler and linker said.
#pragma once

#include <string>

namespace mgpu::cli {

std::string compile_hint(const std::string& diagnostics);

}  // namespace mgpu::cli
