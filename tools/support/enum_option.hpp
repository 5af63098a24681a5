#pragma once
/// \file enum_option.hpp
/// An enum-valued flag whose value stays its name: `--split subject-kfold` sets a
/// data::SplitKind, and `--print-config` / a result's "options" still say "subject-kfold"
/// (CLI11's transformers would store the mapped number instead). A name outside the enum's table
/// is a usage error listing the choices.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "moca/common/enum_names.hpp"

namespace moca::tools {

/// `value` is an E, or a std::optional<E> that stays unset unless the flag is given.
template <typename T, typename E, std::size_t N>
CLI::Option* add_enum_option(CLI::App* app, const std::string& flag, T& value,
                             const EnumName<E> (&table)[N], const std::string& help) {
  std::string names;
  for (const auto& row : table) names += (names.empty() ? "" : " | ") + std::string(row.name);
  // The parse error is the library's message ("--split (x) must be one of: random, ..."), a
  // CLI11 error so that a config file's line is named.
  CLI::Option* opt = app->add_option_function<std::string>(
      flag,
      [&value, &table, flag](const std::string& text) {
        try {
          value = parse_enum(table, text, flag);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      help.empty() ? names : help);
  if constexpr (std::is_same_v<T, E>) {
    opt->default_str(enum_name(table, value));
  } else {
    static_assert(std::is_same_v<T, std::optional<E>>, "an enum or an optional enum");
    if (value) opt->default_str(enum_name(table, *value));
  }
  return opt;
}

}  // namespace moca::tools
