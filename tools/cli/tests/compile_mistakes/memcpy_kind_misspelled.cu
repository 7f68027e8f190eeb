// A misspelled cudaMemcpyKind.
// expect: was not declared in this scope
// expect: cudaMemcpyHostToDevice
int main()
{
    float host[4] = {}, *device = nullptr;
    cudaMalloc(&device, sizeof host);
    cudaMemcpy(device, host, sizeof host, cudaMemcpyHostToDevic);  // error here
    return 0;
}
