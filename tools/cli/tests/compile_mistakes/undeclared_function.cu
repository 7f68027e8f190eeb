// A CUDA function that does not exist.
// expect: 'cudaDeviceSync' was not declared in this scope
int main()
{
    cudaDeviceSync();  // error here
    return 0;
}
