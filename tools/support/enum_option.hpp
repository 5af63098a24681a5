#pragma once
/// \file enum_option.hpp
/// An enum-valued flag whose value stays its name: `--split subject-kfold` sets a
/// data::SplitKind, and `--print-config` / a result's "options" still say "subject-kfold"
/// (CLI11's transformers would store the mapped number instead). A name outside the enum's table
/// is a usage error listing the choices.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "moca/common/enum_names.hpp"

namespace moca::tools {

template <typename E, std::size_t N>
CLI::Option* add_enum_option(CLI::App* app, const std::string& flag, E& value,
                             const EnumName<E> (&table)[N], const std::string& help) {
  std::string names;
  for (const auto& row : table) names += (names.empty() ? "" : " | ") + std::string(row.name);
  CLI::Option* opt = app->add_option_function<std::string>(
      flag,
      [&value, &table, flag](const std::string& text) { value = parse_enum(table, text, flag); },
      help.empty() ? names : help);
  opt->check(CLI::Validator(
      [&table](std::string& text) -> std::string {
        for (const auto& row : table)
          if (text == row.name) return {};
        return "value " + text + " is not one of: " + enum_choices(table);  // CLI11 adds the flag
      },
      "", "enum"));
  opt->default_str(enum_name(table, value));
  return opt;
}

}  // namespace moca::tools
