#include "field_flags.hpp"

#include <cctype>
#include <cstring>
#include <utility>
#include <vector>

namespace moca::tools {

namespace {

// clang-format off
constexpr FieldFlag kFieldFlags[] = {
    // masking::ScoreRunOptions (kcca_score)
    {"ScoreRunOptions::schemes",       "--scheme"},  // not a schema row (split_spec_list)
};
// clang-format on

// The rows add_schema_options added in this program.
std::vector<std::pair<std::string, std::string>>& registered() {
  static std::vector<std::pair<std::string, std::string>> rows;
  return rows;
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether a field may start at `i` / end before `end`: no name character or `::` next to it.
bool starts_name(const std::string& s, size_t i) {
  return i == 0 || (!name_char(s[i - 1]) && s[i - 1] != ':');
}
bool ends_name(const std::string& s, size_t end) {
  return end == s.size() || (!name_char(s[end]) && s.compare(end, 2, "::") != 0);
}

// At `i`: `XOptions::field` (an options struct's field) whose flag `--field` (with '-' for '_')
// `has_flag` knows; returns its length and sets `flag`, or 0.
size_t options_field(const std::string& s, size_t i,
                     const std::function<bool(const std::string&)>& has_flag, std::string& flag) {
  if (!has_flag) return 0;
  size_t j = i;
  while (j < s.size() && name_char(s[j])) ++j;
  static const std::string kSuffix = "Options";
  if (j - i <= kSuffix.size() || s.compare(j - kSuffix.size(), kSuffix.size(), kSuffix) != 0 ||
      s.compare(j, 2, "::") != 0) {
    return 0;
  }
  size_t k = j + 2;
  while (k < s.size() && name_char(s[k])) ++k;
  if (k == j + 2 || !ends_name(s, k)) return 0;
  std::string candidate = "--" + s.substr(j + 2, k - j - 2);
  for (char& c : candidate)
    if (c == '_') c = '-';
  if (!has_flag(candidate)) return 0;
  flag = candidate;
  return k - i;
}

}  // namespace

void add_field_flag(const std::string& field, const std::string& flag) {
  for (auto& row : registered()) {
    if (row.first == field) {
      row.second = flag;
      return;
    }
  }
  registered().emplace_back(field, flag);
}

std::string with_flag_names(const std::string& message,
                            const std::function<bool(const std::string&)>& has_flag) {
  std::string out;
  out.reserve(message.size());
  size_t i = 0;
  while (i < message.size()) {
    std::string flag;
    size_t matched = 0;  // characters of a field at i, replaced by `flag`
    if (starts_name(message, i)) {
      for (const auto& [field, field_flag] : registered()) {
        if (message.compare(i, field.size(), field) == 0 && ends_name(message, i + field.size())) {
          matched = field.size();
          flag = field_flag;
          break;
        }
      }
      // a table row names a flag of the programs that have it
      for (const FieldFlag& row : kFieldFlags) {
        const size_t n = std::strlen(row.field);
        if (matched == 0 && message.compare(i, n, row.field) == 0 && ends_name(message, i + n) &&
            (!has_flag || has_flag(row.flag))) {
          matched = n;
          flag = row.flag;
        }
      }
      if (matched == 0) matched = options_field(message, i, has_flag, flag);
    }
    if (matched > 0) {
      out += flag;
      i += matched;
    } else {
      out += message[i++];
    }
  }
  return out;
}

}  // namespace moca::tools
