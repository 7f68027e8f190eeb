#include "mgpu/sim/kernel_submit.h"
#include <cstdio>
namespace mgpu::sim { cudaError_t submit_kernel(KernelLaunch&& l) { try { l.run_grid(); } catch (KernelFault& f) { printf("fault %s\n", f.message.c_str()); } return cudaSuccess; } }
