#pragma once
/// \file enum_names.hpp
/// One name table per enum, for parsing option text and naming values in output: a constexpr
/// array of {value, name}. The first entry of a value is its name (to_string); later entries of
/// the same value are accepted aliases (e.g. "gaussian" for rbf).
///
///     constexpr EnumName<Estimator> kEstimatorNames[] = {{Estimator::kCca, "cca"},
///                                                        {Estimator::kKcca, "kcca"}};
///     Estimator e = parse_enum(kEstimatorNames, text, "estimator");  // error lists the choices
///     std::string s = enum_name(kEstimatorNames, e);
#include <cstddef>
#include <stdexcept>
#include <string>

namespace moca {

/// One row of a name table.
template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// "a, b, c": every name of the table (aliases included), in table order.
template <typename E, std::size_t N>
std::string enum_choices(const EnumName<E> (&table)[N]) {
  std::string out;
  for (const auto& row : table) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

/// The value named `text`. Throws std::invalid_argument
/// "<what> (<text>) must be one of: <choices>".
template <typename E, std::size_t N>
E parse_enum(const EnumName<E> (&table)[N], const std::string& text, const std::string& what) {
  for (const auto& row : table)
    if (text == row.name) return row.value;
  throw std::invalid_argument(what + " (" + text + ") must be one of: " + enum_choices(table));
}

/// The name of `value` (its first row). Throws std::logic_error for a value without a row.
template <typename E, std::size_t N>
std::string enum_name(const EnumName<E> (&table)[N], E value) {
  for (const auto& row : table)
    if (row.value == value) return row.name;
  throw std::logic_error("enum_name(): a value without a name in its table");
}

}  // namespace moca
