#pragma once
/// \file memory.hpp
/// Memory checks before large allocations: refuse with the numbers instead of std::bad_alloc;
/// and the allocator setting every program runs with.
#include <cstddef>
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

/// glibc's allocator returns every freed block above its mmap threshold to the kernel, so a
/// loop that allocates the same 10 MB matrices again and again page-faults them in afresh each
/// time (kcca_score's default run spent ~40 % of its time there; a training step ~10 %). This
/// serves blocks up to 32 MiB from the heap and keeps up to 1 GiB of freed heap for reuse
/// (mallopt M_MMAP_THRESHOLD / M_TRIM_THRESHOLD). Threads other than the first get arenas of
/// their own, whose extra 64 MiB heaps are unmapped whenever they empty, whatever the trim
/// threshold: the training step's shard threads page-faulted thousands of times per step that
/// way (docs/benchmarks.md), so every thread shares the one heap (M_ARENA_MAX 1; allocations are
/// few and large, the lock is not contended). Called once by every program (run_program) and by the
/// model's setup_runtime, before their threads allocate; idempotent; does nothing on a C library
/// without mallopt. Results do not change, only where blocks come from.
void tune_allocator();

/// Asks the kernel to back the 2 MiB-aligned pages inside [data, data + bytes) with transparent
/// huge pages (madvise MADV_HUGEPAGE; the system's THP mode "madvise" serves only such ranges).
/// Call it on a large buffer before its first write: an n x n matrix of doubles at n = 2000 is
/// then faulted in as 15 huge pages instead of 7800 small ones.
/// Does nothing for buffers under 4 MiB, on systems without it, or if the kernel refuses;
/// contents and results never change.
void advise_huge_pages(void* data, std::size_t bytes);

}  // namespace moca
