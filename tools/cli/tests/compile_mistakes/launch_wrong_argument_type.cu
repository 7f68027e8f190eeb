// A kernel launched with an int buffer where it takes floats.
// expect: cannot convert 'int*' to 'float*'
// expect: argument 1 of 'void scale(float*, const float*, int)'
__global__ void scale(float* dst, const float* src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2 * src[i];
}

int main()
{
    int* data = nullptr;
    cudaMalloc(&data, 32 * sizeof(int));
    scale<<<1, 32>>>(data, data, 32);  // error here
    return cudaDeviceSynchronize();
}
