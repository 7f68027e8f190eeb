// Lesson 4 driver: runs the functions of collectives.cu on this machine, one step per numbered task, and
// says what works. `tools/mgpu run 4` builds and runs it (add --topology NAME for another simulated
// machine); `tools/mgpu check 4` grades the same functions more thoroughly.
#include "collectives.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int device_count = 0;
int failed_checks = 0;
int unwritten_tasks = 0;

std::string describe(ncclResult_t result)
{
    return std::to_string(static_cast<int>(result)) + " (" + ncclGetErrorString(result) + ")";
}

void pass(const std::string& what)
{
    std::printf("  PASS  %s\n", what.c_str());
}

void fail(const std::string& what, const std::string& hint)
{
    ++failed_checks;
    std::printf("  FAIL  %s\n        what to do: %s\n", what.c_str(), hint.c_str());
}

bool expect(bool ok, const std::string& what, const std::string& hint)
{
    if (ok) pass(what);
    else fail(what, hint);
    return ok;
}

// A task whose body is still the skeleton's says so once, instead of a list of failures.
void not_written(const std::string& task, const std::string& sign)
{
    ++unwritten_tasks;
    std::printf("  ....  %s is not written yet (%s): write it in exercises/04-nccl/collectives.cu\n", task.c_str(),
                sign.c_str());
}

int current_device()
{
    int device = -1;
    cudaGetDevice(&device);
    return device;
}

// The driver's own ranks (ncclCommInitAll), so that tasks 2 to 6 can be tried before task 1 works.
std::vector<Rank> driver_ranks()
{
    std::vector<Rank> ranks(static_cast<std::size_t>(device_count));
    std::vector<ncclComm_t> comms(ranks.size());
    if (ncclCommInitAll(comms.data(), device_count, nullptr) != ncclSuccess) return {};
    for (int i = 0; i < device_count; ++i) {
        Rank& rank = ranks[static_cast<std::size_t>(i)];
        rank.device = i;
        rank.comm = comms[static_cast<std::size_t>(i)];
        cudaSetDevice(i);
        cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking);
    }
    cudaSetDevice(0);
    return ranks;
}

void close_driver_ranks(std::vector<Rank>& ranks)
{
    for (Rank& rank : ranks) {
        cudaSetDevice(rank.device);
        cudaStreamSynchronize(rank.stream);
        if (rank.comm != nullptr) ncclCommDestroy(rank.comm);
        cudaStreamDestroy(rank.stream);
    }
    ranks.clear();
    cudaSetDevice(0);
}

// The driver waits itself (not with task 6), so that each step shows its own task's result.
void wait_all(const std::vector<Rank>& ranks)
{
    for (const Rank& rank : ranks) {
        cudaSetDevice(rank.device);
        cudaStreamSynchronize(rank.stream);
        cudaDeviceSynchronize();
    }
    cudaSetDevice(0);
}

template <class T>
std::vector<T*> device_buffers(const std::vector<Rank>& ranks, std::size_t count)
{
    std::vector<T*> buffers;
    for (const Rank& rank : ranks) {
        cudaSetDevice(rank.device);
        T* buffer = nullptr;
        cudaMalloc(&buffer, (count == 0 ? 1 : count) * sizeof(T));
        buffers.push_back(buffer);
    }
    cudaSetDevice(0);
    return buffers;
}

template <class T>
void free_buffers(const std::vector<Rank>& ranks, std::vector<T*>& buffers)
{
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        cudaSetDevice(ranks[i].device);
        cudaFree(buffers[i]);
    }
    buffers.clear();
    cudaSetDevice(0);
}

bool step_open(std::vector<Rank>& ranks)
{
    std::printf("\nStep 1, open_ranks (task 1, section 4.2)\n");
    std::vector<int> devices;
    for (int device = device_count - 1; device >= 0; --device) devices.push_back(device);   // in reverse, on purpose
    const int caller = device_count - 1;
    cudaSetDevice(caller);
    const ncclResult_t result = open_ranks(devices, ranks);
    if (result == ncclInvalidUsage && ranks.empty()) {
        not_written("task 1", "open_ranks returned ncclInvalidUsage, as the skeleton does");
        return false;
    }
    if (!expect(result == ncclSuccess && ranks.size() == devices.size(),
                "open_ranks over devices " + std::to_string(device_count - 1) + "..0 returns ncclSuccess and " +
                    std::to_string(devices.size()) + " ranks",
                "it returned " + describe(result) + " with " + std::to_string(ranks.size()) + " ranks"))
        return false;
    bool placed = true;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        int device = -1, rank = -1, stream_device = -1;
        ncclCommCuDevice(ranks[i].comm, &device);
        ncclCommUserRank(ranks[i].comm, &rank);
        cudaStreamGetDevice(ranks[i].stream, &stream_device);
        placed = expect(device == devices[i] && rank == static_cast<int>(i) && stream_device == devices[i],
                        "entry " + std::to_string(i) + " is rank " + std::to_string(i) + " on device " +
                            std::to_string(devices[i]) + ", its stream too",
                        "it is rank " + std::to_string(rank) + " on device " + std::to_string(device) +
                            ", stream on device " + std::to_string(stream_device) +
                            ": cudaSetDevice(devices[i]) before ncclCommInitRank(..., i) and before the stream") &&
                 placed;
    }
    expect(current_device() == caller, "the caller's device is current again",
           "device " + std::to_string(current_device()) + " is: give the caller's device back (section 4.2)");
    std::vector<Rank> none;
    expect(open_ranks({}, none) == ncclInvalidArgument && none.empty(), "an empty device list gives ncclInvalidArgument",
           "check the list before ncclGetUniqueId");
    return placed;
}

void step_average(const std::vector<Rank>& ranks)
{
    std::printf("\nStep 2, average_in_place (task 2, sections 4.3 and 4.4)\n");
    const std::size_t count = 100003;
    std::vector<float*> buffers = device_buffers<float>(ranks, count);
    const int n = static_cast<int>(ranks.size());
    for (int i = 0; i < n; ++i) {
        std::vector<float> values(count);
        for (std::size_t k = 0; k < count; ++k) values[k] = static_cast<float>((k % 13) + 4 * i);
        cudaMemcpy(buffers[static_cast<std::size_t>(i)], values.data(), count * sizeof(float), cudaMemcpyHostToDevice);
    }
    const ncclResult_t result = average_in_place(ranks, buffers, count);
    if (result == ncclInvalidUsage) {
        not_written("task 2", "average_in_place returned ncclInvalidUsage, as the skeleton does");
    } else if (expect(result == ncclSuccess, "average_in_place returns ncclSuccess", "it returned " + describe(result))) {
        wait_all(ranks);
        std::size_t wrong = 0;
        for (int i = 0; i < n; ++i) {
            std::vector<float> values(count);
            cudaMemcpy(values.data(), buffers[static_cast<std::size_t>(i)], count * sizeof(float), cudaMemcpyDeviceToHost);
            for (std::size_t k = 0; k < count; ++k) {
                const float want = static_cast<float>(k % 13) + 2.0f * static_cast<float>(n - 1);
                if (std::fabs(values[k] - want) > 1e-4f * (1.0f + std::fabs(want))) ++wrong;
            }
        }
        expect(wrong == 0, "every element of every buffer is the average over the ranks",
               std::to_string(wrong) + " elements differ: ncclAllReduce with ncclAvg, in place, on every rank");
    }
    free_buffers(ranks, buffers);
}

void step_broadcast(const std::vector<Rank>& ranks)
{
    std::printf("\nStep 3, broadcast_from_root (task 3, section 4.4)\n");
    const std::size_t count = 4099;
    const int root = static_cast<int>(ranks.size()) - 1;
    std::vector<int*> buffers = device_buffers<int>(ranks, count);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        std::vector<int> values(count, -1);
        if (static_cast<int>(i) == root)
            for (std::size_t k = 0; k < count; ++k) values[k] = static_cast<int>(k * 3 + 1);
        cudaMemcpy(buffers[i], values.data(), count * sizeof(int), cudaMemcpyHostToDevice);
    }
    const ncclResult_t result = broadcast_from_root(ranks, buffers, count, root);
    if (result == ncclInvalidUsage) {
        not_written("task 3", "broadcast_from_root returned ncclInvalidUsage, as the skeleton does");
    } else if (expect(result == ncclSuccess, "broadcast_from_root from rank " + std::to_string(root) + " returns ncclSuccess",
                      "it returned " + describe(result))) {
        wait_all(ranks);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            std::vector<int> values(count);
            cudaMemcpy(values.data(), buffers[i], count * sizeof(int), cudaMemcpyDeviceToHost);
            for (std::size_t k = 0; k < count; ++k) wrong += values[k] != static_cast<int>(k * 3 + 1);
        }
        expect(wrong == 0, "every rank holds the root's values",
               std::to_string(wrong) + " elements differ: ncclBroadcast with the given root on every rank");
        expect(broadcast_from_root(ranks, buffers, count, static_cast<int>(ranks.size())) == ncclInvalidArgument,
               "a root past the last rank gives ncclInvalidArgument", "check the root before the group");
    }
    free_buffers(ranks, buffers);
}

void step_halos(const std::vector<Rank>& ranks)
{
    std::printf("\nStep 4, exchange_halos (task 4, section 4.6)\n");
    const std::size_t interior = 1000, halo = 3, width = interior + 2 * halo;
    const int n = static_cast<int>(ranks.size());
    std::vector<float*> slabs = device_buffers<float>(ranks, width);
    const auto own = [&](int rank, std::size_t k) { return static_cast<float>(rank * 10000 + static_cast<int>(k)); };
    for (int i = 0; i < n; ++i) {
        std::vector<float> values(width, -1.0f);
        for (std::size_t k = 0; k < interior; ++k) values[halo + k] = own(i, k);
        cudaMemcpy(slabs[static_cast<std::size_t>(i)], values.data(), width * sizeof(float), cudaMemcpyHostToDevice);
    }
    const ncclResult_t result = exchange_halos(ranks, slabs, interior, halo);
    if (result == ncclInvalidUsage) {
        not_written("task 4", "exchange_halos returned ncclInvalidUsage, as the skeleton does");
    } else if (expect(result == ncclSuccess, "exchange_halos returns ncclSuccess", "it returned " + describe(result))) {
        wait_all(ranks);
        std::string problem;
        for (int i = 0; i < n && problem.empty(); ++i) {
            std::vector<float> values(width);
            cudaMemcpy(values.data(), slabs[static_cast<std::size_t>(i)], width * sizeof(float), cudaMemcpyDeviceToHost);
            const int left = (i + n - 1) % n, right = (i + 1) % n;
            for (std::size_t k = 0; k < halo && problem.empty(); ++k) {
                if (values[k] != own(left, interior - halo + k))
                    problem = "rank " + std::to_string(i) + "'s left halo [" + std::to_string(k) + "] is " +
                              std::to_string(values[k]) + ", not rank " + std::to_string(left) + "'s own element " +
                              std::to_string(interior - halo + k);
                else if (values[halo + interior + k] != own(right, k))
                    problem = "rank " + std::to_string(i) + "'s right halo [" + std::to_string(k) + "] is " +
                              std::to_string(values[halo + interior + k]) + ", not rank " + std::to_string(right) +
                              "'s own element " + std::to_string(k);
            }
        }
        expect(problem.empty(), "every halo holds its neighbour's edge elements over " + std::to_string(n) + " rank" +
                                    (n == 1 ? "" : "s"),
               problem + ": send the last own elements right and the first left, in the order section 4.6 gives");
    }
    free_buffers(ranks, slabs);
}

void step_train_and_wait(std::vector<Rank>& ranks)
{
    std::printf("\nStep 5, train_step (task 5, section 4.5), and step 6, wait_for_ranks (task 6, section 4.7)\n");
    const std::size_t gradient_count = 1 << 20, activation_count = 1 << 22;
    std::vector<float*> gradients = device_buffers<float>(ranks, gradient_count);
    std::vector<float*> activations = device_buffers<float>(ranks, activation_count);
    std::vector<Replica> replicas(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        cudaSetDevice(ranks[i].device);
        cudaMemset(activations[i], 0, activation_count * sizeof(float));
        replicas[i] = Replica{gradients[i], gradient_count, activations[i], activation_count, nullptr};
        cudaStreamCreateWithFlags(&replicas[i].side_stream, cudaStreamNonBlocking);
    }
    cudaDeviceSynchronize();
    const int step = 5;
    const ncclResult_t result = train_step(ranks, replicas, step);
    if (result == ncclInvalidUsage) {
        not_written("task 5", "train_step returned ncclInvalidUsage, as the skeleton does");
    } else if (expect(result == ncclSuccess, "train_step returns ncclSuccess", "it returned " + describe(result))) {
        const ncclResult_t waited = wait_for_ranks(ranks);
        if (waited == ncclInvalidUsage) not_written("task 6", "wait_for_ranks returned ncclInvalidUsage, as the skeleton does");
        else expect(waited == ncclSuccess, "wait_for_ranks returns ncclSuccess", "it returned " + describe(waited));
        wait_all(ranks);
        for (const Replica& replica : replicas) {
            cudaSetDevice(ranks[&replica - replicas.data()].device);
            cudaStreamSynchronize(replica.side_stream);
        }
        std::size_t wrong = 0;
        const float n = static_cast<float>(ranks.size());
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            std::vector<float> values(gradient_count);
            cudaMemcpy(values.data(), gradients[i], gradient_count * sizeof(float), cudaMemcpyDeviceToHost);
            for (std::size_t k = 0; k < gradient_count; ++k) {
                const float want = 0.5f * (static_cast<float>(k % 61) + step + 3.5f * (n - 1));
                if (std::fabs(values[k] - want) > 1e-4f * (1.0f + std::fabs(want))) ++wrong;
            }
            float first_activation = 0;
            cudaMemcpy(&first_activation, activations[i], sizeof(float), cudaMemcpyDeviceToHost);
            wrong += first_activation != 1.0f;
        }
        expect(wrong == 0, "the gradients are averaged and the activations advanced on every rank",
               std::to_string(wrong) + " values differ: the kernel, then the all-reduce on the same stream; "
                                       "the activations on the side stream");
    }
    for (std::size_t i = 0; i < replicas.size(); ++i) {
        cudaSetDevice(ranks[i].device);
        cudaStreamDestroy(replicas[i].side_stream);
    }
    free_buffers(ranks, gradients);
    free_buffers(ranks, activations);
}

bool step_close(std::vector<Rank>& ranks)
{
    std::printf("\nStep 7, close_ranks (task 7, section 4.8)\n");
    const int caller = device_count - 1;
    cudaSetDevice(caller);
    const ncclResult_t result = close_ranks(ranks);
    if (result == ncclInvalidUsage && !ranks.empty()) {
        not_written("task 7", "close_ranks returned ncclInvalidUsage, as the skeleton does");
        return false;
    }
    expect(result == ncclSuccess && ranks.empty(), "close_ranks returns ncclSuccess and leaves no rank",
           "it returned " + describe(result) + " with " + std::to_string(ranks.size()) + " ranks left");
    expect(current_device() == caller, "the caller's device is current again",
           "device " + std::to_string(current_device()) + " is: give the caller's device back (section 4.8)");
    return true;
}

}  // namespace

int main()
{
    const cudaError_t counted = cudaGetDeviceCount(&device_count);
    if (counted != cudaSuccess || device_count == 0) {
        std::printf("No CUDA device here (cudaGetDeviceCount gave %d). On the simulator pick a machine with\n"
                    "--topology hgx-h200-8, pcie-4 or islands-2x2.\n", static_cast<int>(counted));
        return 1;
    }
    std::printf("Lesson 4, multi-GPU with NCCL: %d device%s\n", device_count, device_count == 1 ? "" : "s");
    if (device_count == 1) std::printf("With one GPU every collective has one rank. Try --topology hgx-h200-8.\n");

    std::vector<Rank> ranks;
    const bool own_ranks = !step_open(ranks);
    // Until task 1 works the driver makes its own ranks, so that tasks 2 to 6 can be tried first.
    if (own_ranks) {
        if (!ranks.empty()) close_driver_ranks(ranks);
        ranks = driver_ranks();
        if (ranks.empty()) {
            std::printf("  ....  the driver could not make its own communicators; the other steps need them\n");
            return 1;
        }
    }
    step_average(ranks);
    step_broadcast(ranks);
    step_halos(ranks);
    step_train_and_wait(ranks);
    if (own_ranks) {
        close_driver_ranks(ranks);
        std::printf("\nStep 7, close_ranks (task 7, section 4.8): it closes the ranks of task 1; write task 1 first\n");
    } else if (!step_close(ranks)) {
        close_driver_ranks(ranks);
    }

    if (failed_checks == 0 && unwritten_tasks == 0) {
        std::printf("\nEvery step passes on this machine. Next: tools/mgpu check 4\n");
        return 0;
    }
    std::printf("\n%d check%s failed, %d task%s not written yet.\n", failed_checks, failed_checks == 1 ? "" : "s",
                unwritten_tasks, unwritten_tasks == 1 ? "" : "s");
    return 1;
}
