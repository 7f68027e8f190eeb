// Three-dimensional grids and blocks: every thread runs once, with the threadIdx, blockIdx,
// blockDim and gridDim of its place in the grid.
#include <doctest/doctest.h>

#include <vector>

#include "launch_recorder.h"

namespace {

struct Seen {
    unsigned thread[3];
    unsigned block[3];
    unsigned block_dim[3];
    unsigned grid_dim[3];
    int visits;
};

__global__ void record_position(Seen* seen) {
    const unsigned block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned thread_linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    Seen& s = seen[block_linear * (blockDim.x * blockDim.y * blockDim.z) + thread_linear];
    s.thread[0] = threadIdx.x, s.thread[1] = threadIdx.y, s.thread[2] = threadIdx.z;
    s.block[0] = blockIdx.x, s.block[1] = blockIdx.y, s.block[2] = blockIdx.z;
    s.block_dim[0] = blockDim.x, s.block_dim[1] = blockDim.y, s.block_dim[2] = blockDim.z;
    s.grid_dim[0] = gridDim.x, s.grid_dim[1] = gridDim.y, s.grid_dim[2] = gridDim.z;
    atomicAdd(&s.visits, 1);
}

// A 3-D block with a barrier: the thread at (x, y, z) reads what the thread at the mirrored
// position wrote.
__global__ void mirror_3d(int* out) {
    __shared__ int cell[4][3][2];
    cell[threadIdx.z][threadIdx.y][threadIdx.x] = static_cast<int>(100 * threadIdx.z + 10 * threadIdx.y + threadIdx.x);
    __syncthreads();
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[linear] = cell[blockDim.z - 1 - threadIdx.z][blockDim.y - 1 - threadIdx.y][blockDim.x - 1 - threadIdx.x];
}

}  // namespace

TEST_CASE("a 3-D grid of 3-D blocks runs every thread once with its own indices") {
    const dim3 grid(3, 2, 2), block(4, 2, 3);
    const unsigned threads = 3 * 2 * 2 * 4 * 2 * 3;
    std::vector<Seen> seen(threads, Seen{});
    record_position<<<grid, block>>>(seen.data());
    REQUIRE_FALSE(kernel_test::last_fault());

    unsigned slot = 0;
    for (unsigned bz = 0; bz < 2; ++bz)
        for (unsigned by = 0; by < 2; ++by)
            for (unsigned bx = 0; bx < 3; ++bx)
                for (unsigned tz = 0; tz < 3; ++tz)
                    for (unsigned ty = 0; ty < 2; ++ty)
                        for (unsigned tx = 0; tx < 4; ++tx, ++slot) {
                            const Seen& s = seen[slot];
                            CHECK(s.visits == 1);
                            CHECK(s.thread[0] == tx);
                            CHECK(s.thread[1] == ty);
                            CHECK(s.thread[2] == tz);
                            CHECK(s.block[0] == bx);
                            CHECK(s.block[1] == by);
                            CHECK(s.block[2] == bz);
                            CHECK((s.block_dim[0] == 4 && s.block_dim[1] == 2 && s.block_dim[2] == 3));
                            CHECK((s.grid_dim[0] == 3 && s.grid_dim[1] == 2 && s.grid_dim[2] == 2));
                        }
}

TEST_CASE("threads of a 3-D block resume after a barrier with their own threadIdx") {
    std::vector<int> out(24, -1);
    mirror_3d<<<1, dim3(2, 3, 4)>>>(out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned z = 0; z < 4; ++z)
        for (unsigned y = 0; y < 3; ++y)
            for (unsigned x = 0; x < 2; ++x)
                CHECK(out[x + 2 * (y + 3 * z)] == static_cast<int>(100 * (3 - z) + 10 * (2 - y) + (1 - x)));
}
