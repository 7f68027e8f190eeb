// __syncthreads takes no argument.
// expect: too many arguments to function 'void __syncthreads()'
__global__ void step(float* data)
{
    data[threadIdx.x] += 1;
    __syncthreads(1);  // error here
}

int main()
{
    float* data = nullptr;
    cudaMalloc(&data, 32 * sizeof(float));
    step<<<1, 32>>>(data);
    return cudaDeviceSynchronize();
}
