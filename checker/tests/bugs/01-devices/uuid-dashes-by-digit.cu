/* uuid text: I put the dashes after 8, 12, 16 and 20 *bytes* (the digit counts of 8-4-4-4-12) instead of
   after bytes 4, 6, 8 and 10, so my UUIDs have the wrong shape. */
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

struct pci_addr {
    unsigned long domain, bus, dev;
};

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* reads exactly `len` hex digits at *p, advancing it; returns 0 on failure */
static int read_hex(const char** p, int len, unsigned long* out)
{
    unsigned long v = 0;
    for (int i = 0; i < len; i++) {
        int h = hex_digit((*p)[i]);
        if (h < 0) return 0;
        v = v * 16 + (unsigned long)h;
    }
    *p += len;
    *out = v;
    return 1;
}

/* "DDDD:BB:SS.F" or "DDDDDDDD:BB:SS.F" */
static int parse_bus_id(const char* s, struct pci_addr* a)
{
    const char* colon = strchr(s, ':');
    unsigned long fn;
    if (!colon) return 0;
    int dlen = (int)(colon - s);
    if (dlen != 4 && dlen != 8) return 0;
    if (!read_hex(&s, dlen, &a->domain) || *s++ != ':') return 0;
    if (!read_hex(&s, 2, &a->bus) || *s++ != ':') return 0;
    if (!read_hex(&s, 2, &a->dev) || *s++ != '.') return 0;
    if (!read_hex(&s, 1, &fn)) return 0;
    return *s == '\0';
}

static int get_pci(int device, struct pci_addr* a)
{
    int d, b, s;
    if (cudaDeviceGetAttribute(&d, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&b, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&s, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    a->domain = (unsigned long)d;
    a->bus = (unsigned long)b;
    a->dev = (unsigned long)s;
    return 1;
}

static int pci_cmp(const struct pci_addr* x, const struct pci_addr* y)
{
    if (x->domain != y->domain) return x->domain < y->domain ? -1 : 1;
    if (x->bus != y->bus) return x->bus < y->bus ? -1 : 1;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return 0;
}

static void uuid_to_text(const cudaUUID_t* u, char* out /* 41 bytes */)
{
    static const char hex[] = "0123456789abcdef";
    char* p = out;
    memcpy(p, "GPU-", 4);
    p += 4;
    for (int i = 0; i < 16; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20) *p++ = '-'; /* 8-4-4-4-12 */
        unsigned char b = (unsigned char)u->bytes[i];
        *p++ = hex[b >> 4];
        *p++ = hex[b & 15];
    }
    *p = '\0';
}

int count_devices()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    return n;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> v;
    int n = count_devices();
    for (int i = 0; i < n; i++) {
        cudaDeviceProp p;
        char bus[32], uuid[41];
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess || cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        uuid_to_text(&p.uuid, uuid);
        DeviceInfo d;
        d.ordinal = i;
        d.name = p.name;
        d.major = p.major;
        d.minor = p.minor;
        d.multiprocessors = p.multiProcessorCount;
        d.total_memory = p.totalGlobalMem;
        d.pci_bus_id = bus;
        d.uuid = uuid;
        v.push_back(d);
    }
    return v;
}

int find_device(const std::string& id)
{
    struct pci_addr want, have;
    int by_bus = parse_bus_id(id.c_str(), &want);
    int n = count_devices();
    for (int i = 0; i < n; i++) {
        if (by_bus) {
            if (get_pci(i, &have) && pci_cmp(&have, &want) == 0) return i;
            continue;
        }
        cudaDeviceProp p;
        char uuid[41];
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        uuid_to_text(&p.uuid, uuid);
        if (id.size() != 40) continue;
        int same = 1;
        for (int k = 0; k < 40 && same; k++)
            same = tolower((unsigned char)uuid[k]) == tolower((unsigned char)id[(size_t)k]);
        if (same) return i;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1, n = count_devices();
    cudaDeviceProp bp;
    struct pci_addr ba = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        cudaDeviceProp p;
        struct pci_addr a;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!get_pci(i, &a)) continue;
        if (p.major < needs.min_major || (p.major == needs.min_major && p.minor < needs.min_minor)) continue;
        if (p.totalGlobalMem < needs.min_memory) continue;
        if (best >= 0) {
            if (p.totalGlobalMem < bp.totalGlobalMem) continue;
            if (p.totalGlobalMem == bp.totalGlobalMem) {
                if (p.multiProcessorCount < bp.multiProcessorCount) continue;
                if (p.multiProcessorCount == bp.multiProcessorCount && pci_cmp(&a, &ba) >= 0) continue;
            }
        }
        best = i;
        bp = p;
        ba = a;
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int cur = -1;
    status_ = cudaGetDevice(&cur);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    if (cur != device) previous_ = cur; /* nothing to give back when nothing changed */
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

static void worker(int dev, const std::function<void(int)>* work, cudaError_t* result)
{
    *result = cudaSetDevice(dev);
    if (*result != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    (*work)(dev);
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    int n = count_devices();
    if (n <= 0) return cudaSuccess;
    cudaError_t* results = new cudaError_t[n];
    std::thread* threads = new std::thread[n];
    for (int i = 0; i < n; i++) {
        results[i] = cudaSuccess;
        threads[i] = std::thread(worker, i, &work, &results[i]);
    }
    for (int i = 0; i < n; i++) threads[i].join();
    cudaError_t first = cudaSuccess;
    for (int i = 0; i < n; i++)
        if (first == cudaSuccess) first = results[i];
    delete[] threads;
    delete[] results;
    return first;
}
