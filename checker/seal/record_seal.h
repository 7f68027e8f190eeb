// The seal on the result channel's records. The student's code runs in the checker's process and
// can write to any descriptor it finds, so a record is believed for what it proves, not for
// where it came from: each line is HMAC-SHA256 (RFC 2104) of the record under the run's key,
// then a space, then the record's JSON. The key is 32 random bytes the judge hands the harness
// through a pipe that is read and closed before any check starts; it never appears on the
// channel, so reading the records back does not help to forge one. Every record also carries
// its place in the run ("seq"), so a record cannot be dropped, repeated or moved unnoticed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mgpu::seal {

// Lowercase hex of HMAC-SHA256(key, message).
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// "<mac> <json>" (no newline).
std::string sealed_line(std::string_view key, std::string_view record_json);

// The JSON of a line sealed under `key`; nothing for any other line.
std::optional<std::string> open_sealed_line(std::string_view key, std::string_view line);

// 32 random bytes from /dev/urandom, as 64 hex digits (the key is handed over and used as text).
std::string new_key();

}  // namespace mgpu::seal
