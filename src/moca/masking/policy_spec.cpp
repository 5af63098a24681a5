#include "moca/masking/policy_spec.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/masking/make_policy.hpp"

namespace moca::masking {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

const std::string* PolicySpec::find(const std::string& key) const {
  for (const auto& kv : options)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

PolicySpec parse_policy_spec(const std::string& text) {
  PolicySpec spec;
  const auto colon = text.find(':');
  spec.name = trim(text.substr(0, colon));
  if (spec.name.empty()) {
    throw_invalid("parse_policy_spec()",
                  "spec '" + text + "' has no policy name (form name[:key=value[,key=value]*])");
  }
  if (colon == std::string::npos) return spec;
  const std::string rest = text.substr(colon + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    const auto comma = rest.find(',', start);
    const std::string item =
        trim(rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    const auto eq = item.find('=');
    if (eq == std::string::npos || trim(item.substr(0, eq)).empty() ||
        trim(item.substr(eq + 1)).empty()) {
      throw_invalid("parse_policy_spec()",
                    "option '" + item + "' in spec '" + text + "' is not of the form key=value");
    }
    const std::string key = trim(item.substr(0, eq));
    if (spec.find(key) != nullptr) {
      throw_invalid("parse_policy_spec()", "key '" + key + "' repeated in spec '" + text + "'");
    }
    spec.options.emplace_back(key, trim(item.substr(eq + 1)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

std::string format_policy_spec(const PolicySpec& spec) {
  std::string s = spec.name;
  for (size_t i = 0; i < spec.options.size(); ++i) {
    s += (i == 0 ? ":" : ",");
    s += spec.options[i].first + "=" + spec.options[i].second;
  }
  return s;
}

std::string format_number(double value) {
  return moca::format_number(value);
}

std::string with_default_ratio(const std::string& spec_text, double ratio) {
  PolicySpec spec = parse_policy_spec(spec_text);
  const PolicyEntry* row = find_policy(spec.name);
  if (row != nullptr && row->ratio == RatioRule::kOfBase) {
    const std::string* b = spec.find("base");
    row = find_policy(b ? *b : "cross");
  }
  const bool takes_ratio = row != nullptr && row->ratio == RatioRule::kOwn;
  if (takes_ratio && spec.find("ratio") == nullptr) {
    spec.options.emplace_back("ratio", format_number(ratio));
  }
  return format_policy_spec(spec);
}

std::vector<std::string> split_spec_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty()) {
      throw_invalid(what, (trim(text).empty() ? std::string("the list is empty")
                                              : "empty item in '" + text + "'"));
    }
    const bool continues = item.find('=') != std::string::npos &&
                           item.find(':') == std::string::npos && !out.empty() &&
                           out.back().find(':') != std::string::npos;
    if (continues) {
      out.back() += "," + item;
    } else {
      out.push_back(item);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace moca::masking
