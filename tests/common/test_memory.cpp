#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "moca/common/memory.hpp"

TEST_CASE("memory checks refuse with the numbers and the alternative") {
  CHECK(moca::format_bytes(57.6e9) == "58 GB");
  CHECK(moca::format_bytes(3.25e9) == "3.2 GB");
  CHECK(moca::format_bytes(512) == "512 B");
  CHECK_NOTHROW(moca::require_memory(1e9, 2000000000ULL, "x", "y"));
  CHECK_NOTHROW(moca::require_memory(1e15, 0, "x", "y"));  // unknown: no refusal
  try {
    moca::require_memory(57.6e9, 24000000000ULL, "exact KCCA at n = 60000", "use lowrank");
    FAIL("no refusal");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) ==
          "exact KCCA at n = 60000 needs ~58 GB; this machine has 24 GB available; use lowrank");
  }
  CHECK(moca::available_memory_bytes() > 0);  // Linux: /proc/meminfo
  CHECK_THROWS_AS(moca::require_memory(1e18, "a petabyte", "less"), std::runtime_error);
}
