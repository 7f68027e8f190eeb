// cudaSetDevice takes the device only.
// expect: too many arguments to function
// expect: cudaError_t cudaSetDevice(int)
int main()
{
    cudaSetDevice(0, 1);  // error here
    return 0;
}
