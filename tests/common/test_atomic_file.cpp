#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "moca/common/atomic_file.hpp"

TEST_CASE("atomic write replaces the file; a failing writer leaves the old one intact") {
  const std::string p = "/tmp/moca_test_atomic.txt";
  moca::write_text_atomic(p, "first");
  CHECK_THROWS_AS(moca::write_file_atomic(p,
                                          [](std::ostream& o) {
                                            o << "partial";
                                            throw std::runtime_error("boom");
                                          }),
                  std::runtime_error);
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "first");
  CHECK_THROWS_AS(moca::write_text_atomic("/nonexistent-dir/x.txt", "a"), std::runtime_error);
}
