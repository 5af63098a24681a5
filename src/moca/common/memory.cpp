#include "moca/common/memory.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace moca {

std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

std::string format_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 5) {
    bytes /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes < 10.0 && u > 0 ? "%.1f %s" : "%.0f %s", bytes, kUnits[u]);
  return buf;
}

void require_memory(double bytes, std::uint64_t available, const std::string& what,
                    const std::string& alternative) {
  if (available == 0 || bytes <= static_cast<double>(available)) return;
  throw std::runtime_error(what + " needs ~" + format_bytes(bytes) + "; this machine has " +
                           format_bytes(static_cast<double>(available)) + " available; " +
                           alternative);
}

void require_memory(double bytes, const std::string& what, const std::string& alternative) {
  require_memory(bytes, available_memory_bytes(), what, alternative);
}

void tune_allocator() {
#ifdef M_MMAP_THRESHOLD
  static const bool tuned = [] {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#ifdef M_ARENA_MAX
    mallopt(M_ARENA_MAX, 1);
#endif
    return true;
  }();
  (void)tuned;
#endif
}

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (data == nullptr || bytes < 2 * kHuge) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHuge - 1);
  if (last > first) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace moca
