#pragma once
/// \file text_replace.hpp
/// One find-and-replace for messages: the library names options by their fields
/// (`DatasetOptions::sample_rate`), and each front end rewrites those names into its own spelling
/// (a program's `--set NAME.sample-rate`, Python's `sample_rate` keyword).
#include <string>

namespace moca {

/// `text` with every occurrence of `from` replaced by `to`, left to right; a replacement is never
/// searched again, so `to` may contain `from`. An empty `from` leaves `text` as it is.
inline std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

}  // namespace moca
