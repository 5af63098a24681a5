// docs/library.md must hold docs/examples/custom_policy.cpp verbatim (the example itself is
// built and run by the ctest `masking_library_example`).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {
std::string read_all(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("docs/library.md includes the example file verbatim, under 30 lines of code") {
  const std::string example =
      read_all(std::string(MOCA_SOURCE_DIR) + "/docs/examples/custom_policy.cpp");
  const std::string doc = read_all(std::string(MOCA_SOURCE_DIR) + "/docs/library.md");
  CHECK(doc.find("```cpp\n" + example + "```") != std::string::npos);
  int lines = 0;
  for (char c : example) lines += c == '\n';
  CHECK(lines <= 30);
}
