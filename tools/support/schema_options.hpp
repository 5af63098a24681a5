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

#include "enum_option.hpp"
#include "field_flags.hpp"
#include "moca/common/option_schema.hpp"

namespace moca::tools {

/// The visitor behind add_schema_options.
class SchemaFlags {
 public:
  SchemaFlags(CLI::App* app, Scope scope) : app_(app), scope_(scope) {}

  template <class T>
  void operator()(T& field, const Option& row) const {
    if (!takes(row)) return;
    const std::string text = help(row);
    if constexpr (std::is_same_v<T, bool>) {
      app_->add_flag(row.flag, field, text);
    } else if constexpr (moca::detail::is_optional<T>::value) {
      // unset unless given: no default to show, and the struct says what unset means
      app_->add_option_function<typename T::value_type>(
          row.flag, [&field](const typename T::value_type& v) { field = v; }, text);
    } else {
      app_->add_option(row.flag, field, text)->capture_default_str();
    }
  }

  template <class E, std::size_t N>
  void operator()(E& field, const Option& row, const EnumName<E> (&table)[N]) const {
    if (takes(row)) add_enum_option(app_, row.flag, field, table, row.help);
  }

 private:
  // A row of this program's scope that the command line takes; registers its flag.
  bool takes(const Option& row) const {
    if ((row.scope & scope_) == 0 || row.surface == Surface::kPython) return false;
    add_field_flag(row.field(), row.flag);
    return true;
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

  CLI::App* app_;
  Scope scope_;
};

/// Adds to `app` a flag for every row of O::schema in `scope` (the struct's bits, e.g.
/// model::kFinetuneScope | model::kScratchScope), bound to the fields of `o`, which must outlive
/// the parse.
template <class O>
void add_schema_options(CLI::App* app, O& o, Scope scope) {
  O::schema(o, SchemaFlags(app, scope));
}

}  // namespace moca::tools
