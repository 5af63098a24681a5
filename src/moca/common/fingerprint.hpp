#pragma once
/// \file fingerprint.hpp
/// Fingerprints that bind work to its inputs: 64-bit FNV-1a over bytes, as 16 hex digits.
/// They detect accidental change (a changed byte alters the hash with chance 1 - 2^-64), not
/// tampering: FNV is not a cryptographic hash.
#include <cstddef>
#include <cstdint>
#include <string>

namespace moca {

/// FNV-1a 64's offset basis: the hash of no bytes.
inline constexpr std::uint64_t kFnv1a64Basis = 14695981039346656037ULL;

/// Continues the FNV-1a 64 hash `h` over `n` bytes at `data`.
std::uint64_t fnv1a64(const void* data, std::size_t n, std::uint64_t h = kFnv1a64Basis);

/// `h` as 16 lower-case hex digits.
std::string hex64(std::uint64_t h);

/// The FNV-1a 64 of a file's bytes as 16 hex digits (read in 1 MiB blocks).
/// std::runtime_error naming the file if it cannot be read.
std::string file_fingerprint(const std::string& path);

}  // namespace moca
