// A kernel launched without one of its arguments.
// expect: void scale(float*, const float*, int)
// expect: candidate expects 3 arguments, 2 provided
__global__ void scale(float* dst, const float* src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2 * src[i];
}

int main()
{
    float* data = nullptr;
    cudaMalloc(&data, 32 * sizeof(float));
    scale<<<1, 32>>>(data, 32);  // error here
    return cudaDeviceSynchronize();
}
