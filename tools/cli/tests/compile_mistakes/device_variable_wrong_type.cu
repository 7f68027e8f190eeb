// A __device__ int given a string in a kernel.
// expect: invalid conversion from 'const char*' to 'int'
__device__ int counter;

__global__ void count()
{
    counter = "one";  // error here
}

int main()
{
    count<<<1, 1>>>();
    return cudaDeviceSynchronize();
}
