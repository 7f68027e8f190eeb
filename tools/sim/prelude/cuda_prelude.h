// What every .cu file starts with once cu2cpp has rewritten it, plus cuda_runtime.h, which nvcc
// includes in every .cu file unasked. The build precompiles this header (cuda_prelude.h.gch beside
// the copy in the build folder), and the judge and `tools/mgpu run` pass it with -include: the
// simulator's headers then cost a student's compile almost nothing. Where the precompiled header
// does not fit the compile (other -D macros, another compiler), g++ reads this text instead, with
// the same meaning.
#include <mgpu/sim/nvcc_predefined.h>
#include <mgpu/sim/device_language.h>
#include <cuda_runtime.h>
