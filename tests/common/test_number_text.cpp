// Tests for number_text.hpp: format_number against printf / ostream, the texts it replaces.
#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "moca/common/number_text.hpp"

namespace {
std::string ostream_text(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}
std::string printf_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

TEST_CASE("format_number: shortest exact text; 12 and 6 digits match ostream and %g") {
  using moca::format_number;
  CHECK(format_number(0.75) == "0.75");
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(42) == "42");
  CHECK(format_number(1.0 / 3.0) == "0.3333333333333333");  // 16 digits round-trip
  for (double v : {0.75, 0.1, 1.0 / 3.0, 42.0, 1e12, 123456.0, 1e6, 2.5e-7, -3.25, 1e300,
                   0.30000000000000004, 19.99999999999, 50.0, 1e-5}) {
    CAPTURE(v);
    CHECK(format_number(v, 12) == ostream_text(v));
    CHECK(format_number(v, 6) == printf_g(v));
  }
}

TEST_CASE("format_fixed: printf's %.*f") {
  CHECK(moca::format_fixed(0.75, 4) == "0.7500");
  CHECK(moca::format_fixed(-1.25, 1) == "-1.2");  // round half to even, as printf
  CHECK(moca::format_fixed(3.0, 0) == "3");
  CHECK(moca::format_fixed(1e300, 2).size() == 304u);
}
