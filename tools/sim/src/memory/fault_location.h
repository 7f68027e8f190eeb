// The source line of a faulting instruction, for the message that ends the process: host code that
// touched device memory is shown at the student's line, not only at the buffer's allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mgpu::sim::mem {

// The instruction address the signal interrupted (0 where the platform is not known).
std::uintptr_t faulting_instruction(const void* signal_context);

// Writes "file:line" of the instruction into `out`, from the program's debug information through
// addr2line; skips lines in system and simulator headers that the code was inlined from. False when
// the program has no line information or addr2line is not installed. Called only on the way to a
// crash: it forks and waits.
bool source_line_of(std::uintptr_t instruction, char* out, std::size_t size);

}  // namespace mgpu::sim::mem
