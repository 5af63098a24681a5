#include "moca/common/error_text.hpp"

#include <algorithm>
#include <stdexcept>

namespace moca {

std::string exception_text(const std::exception& e) {
  std::string text = e.what();
  const size_t at = text.find("Exception raised from ");
  if (at != std::string::npos) text.erase(at);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string printable(const std::string& bytes, std::size_t max_length) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  const size_t n = bytes.size() < max_length ? bytes.size() : max_length;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (bytes.size() > n) out += "...";
  return out;
}

void throw_invalid(const std::string& where, const std::string& field, const std::string& value,
                   const std::string& rule) {
  throw_invalid(where, field + " (" + value + ") " + rule);
}

void throw_invalid(const std::string& where, const std::string& message) {
  throw std::invalid_argument(where.empty() ? message : where + ": " + message);
}

std::string nearest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  long best_score = 0;
  for (const std::string& c : candidates) {
    std::vector<std::size_t> row(c.size() + 1);  // Levenshtein, one row at a time
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= name.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (name[i - 1] != c[j - 1])});
        diagonal = up;
      }
    }
    std::size_t prefix = 0;
    while (prefix < name.size() && prefix < c.size() && name[prefix] == c[prefix]) ++prefix;
    const long score = static_cast<long>(row[c.size()]) - 2 * static_cast<long>(prefix);
    if (best.empty() || score < best_score) {
      best = c;
      best_score = score;
    }
  }
  return best;
}

}  // namespace moca
