// SHA-256 (FIPS 180-4), for the content hash that keys the judge's build cache.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mgpu::judge {

class Sha256 {
public:
    Sha256();
    void update(std::string_view data);
    std::string hex_digest();   // finishes the hash; call once

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace mgpu::judge
