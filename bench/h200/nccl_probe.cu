// What real NCCL answers on one GPU for the calls lesson 4 and the simulator rely on: two ranks of
// one communicator on the same device (refused with ncclInvalidUsage), a fresh communicator's
// asynchronous error, a rank sending to itself inside a group, a count of 0, finalize then destroy,
// and a root or peer outside the communicator. Prints one line per probe.
//   nvcc -std=c++20 -arch=sm_90 nccl_probe.cu -lnccl -o nccl_probe && ./nccl_probe
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <vector>

namespace {

void show(const char* what, ncclResult_t result) { std::printf("%-60s %d (%s)\n", what, result, ncclGetErrorString(result)); }

}  // namespace

int main() {
    int version = 0;
    ncclGetVersion(&version);
    std::printf("NCCL %d\n", version);

    {
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        ncclComm_t comms[2] = {nullptr, nullptr};
        cudaSetDevice(0);
        show("group start", ncclGroupStart());
        show("InitRank rank 0 on device 0 (in group)", ncclCommInitRank(&comms[0], 2, id, 0));
        show("InitRank rank 1 on device 0 (in group)", ncclCommInitRank(&comms[1], 2, id, 1));
        show("group end: two ranks on one GPU", ncclGroupEnd());
        for (ncclComm_t comm : comms)
            if (comm != nullptr) show("abort a comm of the refused pair", ncclCommAbort(comm));
    }

    ncclComm_t comm = nullptr;
    int devices[1] = {0};
    show("ncclCommInitAll on device 0", ncclCommInitAll(&comm, 1, devices));
    ncclResult_t async = ncclInternalError;
    show("ncclCommGetAsyncError on a fresh comm", ncclCommGetAsyncError(comm, &async));
    std::printf("%-60s %d\n", "  its asynchronous error", async);

    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    float* slab = nullptr;
    cudaMalloc(&slab, 16 * sizeof(float));
    std::vector<float> host(16);
    for (int i = 0; i < 16; ++i) host[i] = static_cast<float>(i);
    cudaMemcpy(slab, host.data(), sizeof(float) * 16, cudaMemcpyHostToDevice);
    // One rank, halo 2, interior 12: [0,2) left halo, [2,14) own, [14,16) right halo.
    show("group start", ncclGroupStart());
    show("send last 2 own to self", ncclSend(slab + 12, 2, ncclFloat, 0, comm, stream));
    show("recv left halo from self", ncclRecv(slab, 2, ncclFloat, 0, comm, stream));
    show("send first 2 own to self", ncclSend(slab + 2, 2, ncclFloat, 0, comm, stream));
    show("recv right halo from self", ncclRecv(slab + 14, 2, ncclFloat, 0, comm, stream));
    show("group end: self send/recv", ncclGroupEnd());
    cudaStreamSynchronize(stream);
    cudaMemcpy(host.data(), slab, sizeof(float) * 16, cudaMemcpyDeviceToHost);
    std::printf("%-60s %g %g | %g %g (want 12 13 | 2 3)\n", "  halos after the exchange", host[0], host[1], host[14],
                host[15]);

    show("all-reduce of count 0", ncclAllReduce(slab, slab, 0, ncclFloat, ncclAvg, comm, stream));
    show("broadcast with root 1 of 1 rank", ncclBroadcast(slab, slab, 4, ncclInt, 1, comm, stream));
    show("send to peer 1 of 1 rank", ncclSend(slab, 4, ncclFloat, 1, comm, stream));
    show("ncclGroupEnd without ncclGroupStart", ncclGroupEnd());
    cudaStreamSynchronize(stream);
    show("ncclCommFinalize", ncclCommFinalize(comm));
    show("ncclCommDestroy after finalize", ncclCommDestroy(comm));
    show("ncclCommDestroy(nullptr)", ncclCommDestroy(nullptr));
    cudaFree(slab);
    cudaStreamDestroy(stream);
    return 0;
}
