#pragma once
/// \file schema_options.hpp
/// The command line made from an options struct's schema (moca/common/option_schema.hpp): one
/// flag per row of the program's scope, with the row's help, range and (for an enum) choices;
/// its default is the struct's value when the flag is added. Each added row also registers its
/// field (`Owner::key`) with field_flags.hpp, so the library's messages about that field name
/// the flag of this program.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "enum_option.hpp"
#include "field_flags.hpp"
#include "moca/common/option_schema.hpp"

namespace moca::tools {

/// A second name a program accepts for a row's flag (the studies' `--batch-size` for `--batch`):
/// the same option, so giving both is one option given twice; --help lists both, --print-config
/// writes the row's flag.
struct FlagAlias {
  std::string flag;   ///< the row's flag ("--batch")
  std::string alias;  ///< the other name ("--batch-size")
};

namespace schema_flags_detail {
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
}  // namespace schema_flags_detail

/// The visitor behind add_schema_options.
class SchemaFlags {
 public:
  SchemaFlags(CLI::App* app, Scope scope, std::vector<FlagAlias> aliases = {})
      : app_(app), scope_(scope), aliases_(std::move(aliases)) {}

  template <class T>
  void operator()(T& field, const Option& row) const {
    if (!takes(row)) return;
    add_field_flag(row.field(), row.flag);
    const std::string text = help(row), names = this->names(row);
    if constexpr (std::is_same_v<T, bool>) {
      app_->add_flag(names, field, text);
    } else if constexpr (schema_flags_detail::is_vector<T>::value) {
      CLI::Option* opt = app_->add_option(names, field, text);
      if (row.comma_list) opt->delimiter(',');                            // a,b,c or repeated
      if (!row.comma_list && !field.empty()) opt->capture_default_str();  // the items as given
    } else if constexpr (moca::schema_detail::is_optional<T>::value) {
      // unset unless given (the struct says what unset means), unless the program's struct sets
      // it: then that value is the flag's default, shown and written by --print-config
      CLI::Option* opt = app_->add_option_function<typename T::value_type>(
          names, [&field](const typename T::value_type& v) { field = v; }, text);
      if (field) opt->default_str(CLI::detail::to_string(*field));
    } else {
      app_->add_option(names, field, text)->capture_default_str();
    }
  }

  /// An enum, or a std::optional enum (unset unless given).
  template <class T, class E, std::size_t N>
  void operator()(T& field, const Option& row, const EnumName<E> (&table)[N]) const {
    if (!takes(row)) return;
    add_field_flag(row.field(), row.flag);
    add_enum_option(app_, names(row), field, table, row.help);
  }

 private:
  // Whether the row is of this program's scope and offered on the command line.
  bool takes(const Option& row) const {
    return (row.scope & scope_) != 0 && row.surface != Surface::kPython;
  }
  static std::string help(const Option& row) {
    std::string text = row.help;
    if (row.rule != nullptr) {
      text += " (" + std::string(row.rule) + ")";
    } else if (!row.range.unbounded()) {
      text += " (" + row.range.text() + ")";
    }
    return text;
  }

  // The row's flag, and a second name where the program keeps an older one for it.
  std::string names(const Option& row) const {
    for (const FlagAlias& a : aliases_) {
      if (a.flag == row.flag) return std::string(row.flag) + "," + a.alias;
    }
    return row.flag;
  }

  CLI::App* app_;
  Scope scope_;
  std::vector<FlagAlias> aliases_;
};

/// The visitor behind scope_flags: the flag of each row whose scope is exactly `scope`.
class RowFlags {
 public:
  explicit RowFlags(Scope scope) : scope_(scope) {}
  template <class T>
  void operator()(const T&, const Option& row) {
    if (row.scope == scope_) flags_.emplace_back(row.flag);
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const Option& row, const EnumName<E> (&)[N]) {
    if (row.scope == scope_) flags_.emplace_back(row.flag);
  }
  const std::vector<std::string>& flags() const { return flags_; }

 private:
  Scope scope_;
  std::vector<std::string> flags_;
};

/// The flags of the rows of O::schema whose scope is exactly `scope` (e.g. the rows only a
/// from-scratch run takes), in schema order.
template <class O>
std::vector<std::string> scope_flags(const O& o, Scope scope) {
  RowFlags rows(scope);
  O::schema(o, rows);
  return rows.flags();
}

/// Adds to `app` a flag for every row of O::schema in `scope` (the struct's bits, e.g.
/// model::kFinetuneScope | model::kScratchScope), bound to the fields of `o`, which must outlive
/// the parse; `aliases` gives some of them a second name.
template <class O>
void add_schema_options(CLI::App* app, O& o, Scope scope, std::vector<FlagAlias> aliases = {}) {
  O::schema(o, SchemaFlags(app, scope, std::move(aliases)));
}

}  // namespace moca::tools
