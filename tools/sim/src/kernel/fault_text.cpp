#include "kernel/fault_text.h"

#include <string>

namespace mgpu::sim::kernel {
namespace {

std::string triple(unsigned x, unsigned y, unsigned z) {
    std::string text = "(";
    text += std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
    return text;
}

// "0-15, 32, 40-47" from ascending numbers.
std::string ranges(const std::vector<unsigned>& values) {
    std::string text;
    for (std::size_t i = 0; i < values.size();) {
        std::size_t j = i;
        while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
        if (!text.empty()) text += ", ";
        text += std::to_string(values[i]);
        if (j > i) text.append("-").append(std::to_string(values[j]));
        i = j + 1;
    }
    return text;
}

const char* call_name(const WaitRequest& request) {
    if (!request.warp) {
        switch (request.barrier) {
            case BarrierKind::Sync: return "__syncthreads()";
            case BarrierKind::Count: return "__syncthreads_count()";
            case BarrierKind::And: return "__syncthreads_and()";
            case BarrierKind::Or: return "__syncthreads_or()";
        }
    }
    switch (request.warp_op) {
        case WarpOp::Sync: return "__syncwarp()";
        case WarpOp::ShuffleIndex: return "__shfl_sync()";
        case WarpOp::ShuffleUp: return "__shfl_up_sync()";
        case WarpOp::ShuffleDown: return "__shfl_down_sync()";
        case WarpOp::ShuffleXor: return "__shfl_xor_sync()";
        case WarpOp::Ballot: return "__ballot_sync()";
        case WarpOp::Any: return "__any_sync()";
        case WarpOp::All: return "__all_sync()";
    }
    return "a warp operation";
}

}  // namespace

std::string where_in_grid(const GridShape& shape, const uint3& block) {
    std::string text = "kernel '";
    text += shape.kernel_name;
    text += "'";
    if (shape.site.line > 0) text += std::string(" (launched at ") + shape.site.file + ":" + std::to_string(shape.site.line) + ")";
    text += ", block " + triple(block.x, block.y, block.z);
    return text;
}

std::string describe_threads(const std::vector<unsigned>& linear, const dim3& block) {
    if (block.y == 1 && block.z == 1) return "threadIdx.x " + ranges(linear);
    std::string text = linear.size() == 1 ? "thread " : "threads ";
    const std::size_t shown = linear.size() < 4 ? linear.size() : 3;
    for (std::size_t i = 0; i < shown; ++i) {
        const unsigned t = linear[i];
        if (i > 0) text += ", ";
        text += triple(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
    }
    if (shown < linear.size()) text += " and " + std::to_string(linear.size() - shown) + " more";
    return text;
}

std::string describe_lanes(std::uint32_t lanes) {
    std::vector<unsigned> list;
    for (unsigned lane = 0; lane < 32; ++lane)
        if (lanes & (1u << lane)) list.push_back(lane);
    return (list.size() == 1 ? "lane " : "lanes ") + ranges(list);
}

std::string describe_call(const WaitRequest& request) {
    return std::string(call_name(request)) + " at " + request.where.file_name() + ":" +
           std::to_string(request.where.line());
}

}  // namespace mgpu::sim::kernel
