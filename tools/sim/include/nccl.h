// NCCL's API on the simulated machine: the names, types, numeric values and signatures of
// NCCL 2.28, so that a program written for NCCL builds unchanged with g++ against the simulator.
// One process drives every rank (one host thread for all ranks inside groups, or a thread per
// rank). Like the CUDA headers of the simulator, every function takes a defaulted Site last so
// that the trace records where each call was written.
#pragma once

#include <climits>
#include <cstddef>

#include "cuda_runtime_api.h"
#include "mgpu/sim/site.h"

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""

// Before 2.9 a version was major*1000 + minor*100 + patch; from 2.9 on the minor takes two digits.
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef struct ncclComm* ncclComm_t;
#define NCCL_COMM_NULL NULL

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclNumResults = 8
} ncclResult_t;

typedef enum {
    ncclInt8 = 0, ncclChar = 0,
    ncclUint8 = 1,
    ncclInt32 = 2, ncclInt = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6, ncclHalf = 6,
    ncclFloat32 = 7, ncclFloat = 7,
    ncclFloat64 = 8, ncclDouble = 8,
    ncclBfloat16 = 9,
    ncclFloat8e4m3 = 10,
    ncclFloat8e5m2 = 11,
    ncclNumTypes = 12
} ncclDataType_t;

// Operations made with ncclRedOpCreatePreMulSum take values from ncclNumOps up to ncclMaxRedOp.
typedef enum {
    ncclSum = 0,
    ncclProd = 1,
    ncclMax = 2,
    ncclMin = 3,
    ncclAvg = 4,
    ncclNumOps = 5,
    ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
    ncclScalarDevice = 0,          // the scalar is read from device memory when the operation runs
    ncclScalarHostImmediate = 1    // the scalar is read from host memory during the call
} ncclScalarResidence_t;

#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL

#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

// Communicator options. Fields left at NCCL_CONFIG_UNDEF_* take NCCL's defaults; size, magic and
// version let the library recognise a structure set up with NCCL_CONFIG_INITIALIZER.
typedef struct ncclConfig_v22800 {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char* netName;
    int splitShare;
    int trafficClass;
    const char* commName;
    int collnetEnable;
    int CTAPolicy;
    int shrinkShare;
    int nvlsCTAs;
    int nChannelsPerNetPeer;
    int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_MAGIC 0xcafebeef

#define NCCL_CONFIG_INITIALIZER {                                         \
    sizeof(ncclConfig_t),                                                 \
    NCCL_CONFIG_MAGIC,                                                    \
    NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),                     \
    NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,  \
    NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,  \
    NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,  \
    NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,  \
    NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT                          \
}

// Versions and errors
ncclResult_t ncclGetVersion(int* version, MGPU_SITE);
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId, MGPU_SITE);
const char* ncclGetErrorString(ncclResult_t result, MGPU_SITE);
const char* ncclGetLastError(ncclComm_t comm, MGPU_SITE);

// Communicators
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, MGPU_SITE);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config, MGPU_SITE);
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist, MGPU_SITE);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config,
                           MGPU_SITE);
ncclResult_t ncclCommFinalize(ncclComm_t comm, MGPU_SITE);
ncclResult_t ncclCommDestroy(ncclComm_t comm, MGPU_SITE);
ncclResult_t ncclCommAbort(ncclComm_t comm, MGPU_SITE);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError, MGPU_SITE);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count, MGPU_SITE);
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device, MGPU_SITE);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank, MGPU_SITE);

// Memory
ncclResult_t ncclMemAlloc(void** ptr, size_t size, MGPU_SITE);
ncclResult_t ncclMemFree(void* ptr, MGPU_SITE);
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle, MGPU_SITE);
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle, MGPU_SITE);

// Reduction operations
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm, MGPU_SITE);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm, MGPU_SITE);

// Collectives: enqueued on `stream`, which must belong to the communicator's device.
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream, MGPU_SITE);

// Point to point: a send and the matching receive must agree on count and type.
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream, MGPU_SITE);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream, MGPU_SITE);

// Groups: nothing inside a group is enqueued before the outermost ncclGroupEnd.
ncclResult_t ncclGroupStart(MGPU_SITE);
ncclResult_t ncclGroupEnd(MGPU_SITE);
