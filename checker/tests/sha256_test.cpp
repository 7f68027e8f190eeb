// Test vectors from FIPS 180-2, appendix B (SHA-256 examples).
#include <doctest/doctest.h>

#include <string>

#include "sha256.h"

using mgpu::seal::Sha256;
using mgpu::seal::sha256_hex;

TEST_CASE("sha256 of the empty message") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("sha256 of abc (one block)") {
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("sha256 of the two-block message, fed in pieces") {
    const std::string message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(sha256_hex(message) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 pieces;
    for (std::size_t i = 0; i < message.size(); i += 7) pieces.update(message.substr(i, 7));
    CHECK(pieces.hex_digest() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sha256 of a million a's") {
    Sha256 hash;
    const std::string thousand(1000, 'a');
    for (int i = 0; i < 1000; ++i) hash.update(thousand);
    CHECK(hash.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
