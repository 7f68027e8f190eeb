// A __device__ function runs on the GPU only: the host cannot call it.
// expect: calling a __device__ function("square(float)") from a __host__ function("main") is not allowed
__device__ float square(float x) { return x * x; }

__global__ void squares(float* data)
{
    data[threadIdx.x] = square(data[threadIdx.x]);
}

int main()
{
    float* data = nullptr;
    cudaMalloc(&data, 32 * sizeof(float));
    squares<<<1, 32>>>(data);
    float check = square(2.0f);  // error here
    cudaFree(data);
    return check == 4.0f ? 0 : 1;
}
