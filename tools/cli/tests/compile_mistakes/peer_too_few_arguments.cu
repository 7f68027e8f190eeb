// cudaDeviceCanAccessPeer called as if it answered: the answer goes to its first argument.
// expect: cudaError_t cudaDeviceCanAccessPeer(int*, int, int)
int main()
{
    return cudaDeviceCanAccessPeer(1, 2);  // error here
}
