// The devices' copies of __device__ and __constant__ variables (see mgpu/sim/device_symbol.h), as
// the rest of the runtime loads and drops them.
#pragma once

namespace mgpu::sim::rt {

// Frees the device's copies (its context is torn down); the next use loads them afresh.
void unload_symbols(int device);

// Forgets every copy on every device, after the memory that held them was dropped (a new machine).
void forget_symbols();

// While it lives, variables named by kernel code on this host thread are those of `device`: the
// runtime holds one around each grid it runs.
class SymbolGrid {
public:
    explicit SymbolGrid(int device);
    SymbolGrid(const SymbolGrid&) = delete;
    SymbolGrid& operator=(const SymbolGrid&) = delete;
    ~SymbolGrid();

private:
    int previous_;
};

}  // namespace mgpu::sim::rt
