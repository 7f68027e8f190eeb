#include "race_annotations.h"

// ThreadSanitizer's annotation interface (sanitizer/tsan_interface.h); weak, so that the simulator
// links into programs without it, where these are null.
extern "C" {
__attribute__((weak)) void __tsan_acquire(void* address);
__attribute__((weak)) void __tsan_release(void* address);
}

namespace mgpu::sim::rt {

void race_release(const void* object) {
    if (__tsan_release != nullptr) __tsan_release(const_cast<void*>(object));
}

void race_acquire(const void* object) {
    if (__tsan_acquire != nullptr) __tsan_acquire(const_cast<void*>(object));
}

}  // namespace mgpu::sim::rt
