#include "moca/common/number_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace moca {

std::string format_number(double value, int max_digits) {
  char buf[64];
  const double integer_limit = max_digits >= 15 ? 1e15 : std::pow(10.0, max_digits);
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < integer_limit) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  for (int precision = 1; precision <= max_digits; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string format_fixed(double value, int digits) {
  char buf[512];  // %f of a double: at most 309 integer digits, a sign and the decimals
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return buf;
}

}  // namespace moca
