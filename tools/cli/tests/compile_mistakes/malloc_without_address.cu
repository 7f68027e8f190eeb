// The pointer itself passed to cudaMalloc instead of its address.
// expect: no matching function for call to 'cudaMalloc(float*&, long unsigned int)'
// expect: cudaError_t cudaMalloc(void**, size_t)
int main()
{
    float* device = nullptr;
    cudaMalloc(device, 16 * sizeof(float));  // error here
    return 0;
}
