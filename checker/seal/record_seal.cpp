#include "record_seal.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <stdexcept>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

namespace mgpu::seal {

namespace {

constexpr std::size_t kBlock = 64;
constexpr std::size_t kMacDigits = 64;

std::string hex(const std::array<std::uint8_t, 32>& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string text;
    for (std::uint8_t byte : bytes) {
        text += digits[byte >> 4];
        text += digits[byte & 15];
    }
    return text;
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
    std::array<std::uint8_t, kBlock> padded{};
    if (key.size() > kBlock) {
        Sha256 long_key;
        long_key.update(key);
        const auto digest = long_key.digest();
        std::copy(digest.begin(), digest.end(), padded.begin());
    } else {
        for (std::size_t i = 0; i < key.size(); ++i) padded[i] = static_cast<std::uint8_t>(key[i]);
    }
    std::array<char, kBlock> inner_pad{}, outer_pad{};
    for (std::size_t i = 0; i < kBlock; ++i) {
        inner_pad[i] = static_cast<char>(padded[i] ^ 0x36);
        outer_pad[i] = static_cast<char>(padded[i] ^ 0x5c);
    }
    Sha256 inner;
    inner.update(std::string_view(inner_pad.data(), kBlock));
    inner.update(message);
    const auto inner_digest = inner.digest();
    Sha256 outer;
    outer.update(std::string_view(outer_pad.data(), kBlock));
    outer.update(std::string_view(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
    const std::string mac = hex(outer.digest());
    // What the key leaves on the stack is the student's to read after this returns: wipe it.
    explicit_bzero(padded.data(), padded.size());
    explicit_bzero(inner_pad.data(), inner_pad.size());
    explicit_bzero(outer_pad.data(), outer_pad.size());
    return mac;
}

std::string sealed_line(std::string_view key, std::string_view record_json) {
    std::string line = hmac_sha256_hex(key, record_json);
    line += ' ';
    line += record_json;
    return line;
}

std::optional<std::string> open_sealed_line(std::string_view key, std::string_view line) {
    if (line.size() <= kMacDigits + 1 || line[kMacDigits] != ' ') return std::nullopt;
    const std::string_view mac = line.substr(0, kMacDigits);
    const std::string_view json = line.substr(kMacDigits + 1);
    const std::string expected = hmac_sha256_hex(key, json);
    unsigned char difference = 0;   // compared in full, whatever the first wrong digit
    for (std::size_t i = 0; i < kMacDigits; ++i) difference |= static_cast<unsigned char>(mac[i] ^ expected[i]);
    if (difference != 0) return std::nullopt;
    return std::string(json);
}

std::string new_key() {
    std::array<std::uint8_t, 32> bytes{};
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    std::size_t filled = 0;
    while (fd >= 0 && filled < bytes.size()) {
        ssize_t got = ::read(fd, bytes.data() + filled, bytes.size() - filled);
        if (got <= 0) break;
        filled += static_cast<std::size_t>(got);
    }
    if (fd >= 0) ::close(fd);
    // A guessable key would let a submission seal its own verdict: without /dev/urandom there is none.
    if (filled != bytes.size()) throw std::runtime_error("no random bytes from /dev/urandom for the run's key");
    return hex(bytes);
}

}  // namespace mgpu::seal
