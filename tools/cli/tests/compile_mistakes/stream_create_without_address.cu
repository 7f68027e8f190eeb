// The stream passed to cudaStreamCreate instead of its address.
// expect: argument 1 of 'cudaError_t cudaStreamCreate(CUstream_st**)'
int main()
{
    cudaStream_t stream;
    cudaStreamCreate(stream);  // error here
    return 0;
}
