#pragma once
/// \file list_flags.hpp
/// (and add_schema_rows: a schema's rows between two flags)
/// The studies' comma-separated list flags (--scheme, --policies, --features, --settings) as
/// schema rows of a std::vector<std::string> (option_schema.hpp). Their rows are declared with
/// comma_list = false, so CLI11 keeps each given text whole (policy specs hold commas of their
/// own: "adaptive:base=sync,beta=5") and the program splits the joined texts as the flag always
/// did (masking::split_spec_list: spaces trimmed, an empty item refused naming the flag).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "schema_options.hpp"

namespace moca::sim {

/// The items joined by commas ("cross,sync"), as the flag takes them.
inline std::string join_list(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i == 0 ? "" : ",") + items[i];
  return text;
}

/// Shows the list's default in --help (`--scheme TEXT=cross,sync`) and writes it in
/// --print-config (`scheme = "cross,sync"`) as one comma-separated text, as the flag takes it
/// (a vector's default would read `[cross,sync]` and be written as a list).
inline void show_list_default(CLI::App& app, const std::string& flag,
                              const std::vector<std::string>& items) {
  app.get_option(flag)->default_str(join_list(items));
}

/// Adds the rows of O::schema from the one whose flag is `first` to the one whose flag is `last`,
/// in schema order: a program that lists other flags between its rows keeps them where they
/// always were in --help and --print-config.
template <class O>
void add_schema_rows(CLI::App* app, O& o, const std::string& first, const std::string& last) {
  const moca::tools::SchemaFlags add(app, moca::kEveryScope);
  bool on = false;
  O::schema(o, [&](auto& field, const moca::Option& row, const auto&... names) {
    on = on || row.flag == first;
    if (on) add(field, row, names...);
    if (row.flag == last) on = false;
  });
}

}  // namespace moca::sim
