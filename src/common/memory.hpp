#pragma once
/// \file memory.hpp
/// Memory checks before large allocations: refuse with the numbers instead of std::bad_alloc.
#include <cstdint>
#include <string>

namespace moca {

/// The memory available to new allocations without swapping: MemAvailable of /proc/meminfo,
/// in bytes; 0 when it cannot be read (then no check refuses anything).
std::uint64_t available_memory_bytes();

/// "58 GB", "512 MB", "3.2 kB": a byte count for messages (powers of 1000, 2 significant digits
/// below 10).
std::string format_bytes(double bytes);

/// Throws std::runtime_error "<what> needs ~X; this machine has Y available; <alternative>"
/// when `bytes` exceeds `available` (> 0). Does nothing when `available` is 0 (unknown).
void require_memory(double bytes, std::uint64_t available, const std::string& what,
                    const std::string& alternative);

/// require_memory with available_memory_bytes().
void require_memory(double bytes, const std::string& what, const std::string& alternative);

}  // namespace moca
