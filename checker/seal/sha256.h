// SHA-256 (FIPS 180-4): the content hash that keys the judge's build cache, and the hash under
// the HMAC that seals the result channel's records (record_seal.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mgpu::seal {

class Sha256 {
public:
    Sha256();
    void update(std::string_view data);
    std::array<std::uint8_t, 32> digest();   // finishes the hash; call digest or hex_digest once
    std::string hex_digest();

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace mgpu::seal
