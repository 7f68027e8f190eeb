// ncclAllReduce without its communicator and stream.
// expect: ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t)
#include <nccl.h>

int main()
{
    float* data = nullptr;
    cudaMalloc(&data, 32 * sizeof(float));
    ncclAllReduce(data, data, 32, ncclFloat, ncclSum);  // error here
    return 0;
}
