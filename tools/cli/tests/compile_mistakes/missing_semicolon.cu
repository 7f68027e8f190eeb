// A statement without its semicolon.
// expect: expected ';'
int main()
{
    int count = 0;
    cudaGetDeviceCount(&count)  // error here
    return count;
}
