// cudaMemcpy without the direction of the copy.
// expect: too few arguments to function 'cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind)'
int main()
{
    float host[4] = {}, *device = nullptr;
    cudaMalloc(&device, sizeof host);
    cudaMemcpy(device, host, sizeof host);  // error here
    return 0;
}
