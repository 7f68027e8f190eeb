// __match_any_sync and __reduce_*_sync: the lanes that took part are found with a ballot, then
// each of their values is read with a shuffle, every lane of the mask going through the same
// sequence of warp operations, so that a lane that never arrives is diagnosed as for any shuffle.
#include <algorithm>
#include <bit>

#include "mgpu/sim/device_sync.h"

namespace mgpu::sim::kernel {

namespace {

unsigned lanes_present(unsigned mask, const std::source_location& where) {
    return static_cast<unsigned>(wait_at_warp_op(WarpOp::Ballot, mask, 1, 0, 32, where));
}

}  // namespace

unsigned match_lanes(unsigned mask, std::uint64_t bits, const std::source_location& where) {
    unsigned matching = 0;
    for (unsigned present = lanes_present(mask, where); present != 0; present &= present - 1) {
        const int lane = std::countr_zero(present);
        if (wait_at_warp_op(WarpOp::ShuffleIndex, mask, bits, lane, 32, where) == bits) matching |= 1u << lane;
    }
    return matching;
}

unsigned reduce_lanes(unsigned mask, unsigned value, WarpReduction reduction, const std::source_location& where) {
    bool first = true;
    unsigned result = 0;
    for (unsigned present = lanes_present(mask, where); present != 0; present &= present - 1) {
        const int lane = std::countr_zero(present);
        const auto other = static_cast<unsigned>(wait_at_warp_op(WarpOp::ShuffleIndex, mask, value, lane, 32, where));
        if (first) {
            result = other;
            first = false;
            continue;
        }
        switch (reduction) {
        case WarpReduction::Add: result += other; break;
        case WarpReduction::Min: result = std::min(result, other); break;
        case WarpReduction::Max: result = std::max(result, other); break;
        case WarpReduction::SignedMin:
            result = static_cast<unsigned>(std::min(static_cast<int>(result), static_cast<int>(other)));
            break;
        case WarpReduction::SignedMax:
            result = static_cast<unsigned>(std::max(static_cast<int>(result), static_cast<int>(other)));
            break;
        case WarpReduction::And: result &= other; break;
        case WarpReduction::Or: result |= other; break;
        case WarpReduction::Xor: result ^= other; break;
        }
    }
    return result;
}

}  // namespace mgpu::sim::kernel
