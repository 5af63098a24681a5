#pragma once
/// \file schema_kwargs.hpp
/// Python keyword arguments made from an options struct's schema (moca/common/option_schema.hpp):
/// set_from_kwargs() sets the fields a dict names, schema_rows() describes every keyword (its
/// default, help, rule, choices and modes) for the wrappers' signatures and docstrings, and
/// with_keyword_names() makes the library's `Owner::key` in a message the keyword `key`.
#include <pybind11/pybind11.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/common/text_replace.hpp"

namespace moca::python {

namespace py = pybind11;

/// The visitor of set_from_kwargs: a row present in `kwargs` (None = leave the default) is
/// converted strictly (an int for an int, a number but not a bool for a float, a bool for a
/// bool, a str or path for a string, a sequence of str for a list, a choice's name for an enum)
/// and set; a row outside `scope` (e.g. layer_decay for the linear probe) is a ValueError, as it
/// would be ignored.
class KwargsReader {
 public:
  KwargsReader(const py::dict& kwargs, Scope scope, std::string scope_name)
      : kwargs_(kwargs), scope_(scope), scope_name_(std::move(scope_name)) {}

  template <class T>
  void operator()(T& field, const Option& row) {
    const py::object v = take(row);
    if (!v) return;
    if constexpr (moca::schema_detail::is_optional<T>::value) {
      typename T::value_type value{};
      convert(v, row, value);
      field = value;
    } else {
      convert(v, row, field);
    }
  }

  template <class E, std::size_t N>
  void operator()(E& field, const Option& row, const EnumName<E> (&table)[N]) {
    const py::object v = take(row);
    if (!v) return;
    if (!py::isinstance<py::str>(v)) type_error(row, v, "a str (" + enum_choices(table) + ")");
    field = parse_enum(table, v.cast<std::string>(), row.key);
  }

  /// The keywords of `kwargs` that no row took.
  std::vector<std::string> unknown() const {
    std::vector<std::string> out;
    for (const auto& item : kwargs_) {
      const std::string key = py::str(item.first);
      bool known = false;
      for (const auto& k : taken_) known = known || k == key;
      if (!known) out.push_back(key);
    }
    return out;
  }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  // The value of the row's keyword, or a null object when absent or None.
  py::object take(const Option& row) {
    if (row.surface == Surface::kCommandLine) return py::object();
    keys_.emplace_back(row.key);
    if (!kwargs_.contains(row.key)) return py::object();
    taken_.emplace_back(row.key);
    py::object v = kwargs_[row.key];
    if (v.is_none()) return py::object();
    if ((row.scope & scope_) == 0) {
      throw std::invalid_argument(std::string(row.key) + " (" + std::string(py::repr(v)) +
                                  ") does not apply to " + scope_name_ +
                                  "; leave it None or choose a mode that uses it");
    }
    return v;
  }

  [[noreturn]] static void type_error(const Option& row, const py::handle& v,
                                      const std::string& wanted) {
    throw py::type_error(std::string(row.key) + " must be " + wanted + ", not " +
                         std::string(py::str(py::type::handle_of(v).attr("__name__"))));
  }

  // Python's bool or NumPy's (numpy 2 names its type "bool", numpy 1 "bool_").
  static bool is_bool(const py::object& v) {
    const std::string type = py::str(py::type::handle_of(v).attr("__name__"));
    return type == "bool" || type == "bool_";
  }
  static void convert(const py::object& v, const Option& row, bool& out) {
    if (!is_bool(v)) type_error(row, v, "a bool");
    out = v.attr("__bool__")().cast<bool>();
  }
  static void convert(const py::object& v, const Option& row, std::string& out) {
    if (py::isinstance<py::str>(v)) {
      out = v.cast<std::string>();
    } else if (py::hasattr(v, "__fspath__")) {
      out = py::module_::import("os").attr("fspath")(v).cast<std::string>();
    } else {
      type_error(row, v, "a str or path");
    }
  }
  static void convert(const py::object& v, const Option& row, std::vector<std::string>& out) {
    if (py::isinstance<py::str>(v) || !py::isinstance<py::sequence>(v)) {
      type_error(row, v, "a sequence of str");
    }
    out.clear();
    for (const py::handle item : v) {
      if (!py::isinstance<py::str>(item)) type_error(row, item, "a sequence of str");
      out.push_back(item.cast<std::string>());
    }
  }
  static void convert(const py::object& v, const Option& row, double& out) {
    if (is_bool(v) || py::isinstance<py::str>(v) || !py::hasattr(v, "__float__")) {
      type_error(row, v, "a number");
    }
    out = py::float_(v).cast<double>();
  }
  template <class I>
  static std::enable_if_t<std::is_integral_v<I>> convert(const py::object& v, const Option& row,
                                                         I& out) {
    if (is_bool(v) || !py::hasattr(v, "__index__")) {
      type_error(row, v, "an int");
    }
    // Beyond the C++ type: "seed (-1) must be in [0, 18446744073709551615]", as moca's other
    // integer arguments say it (python/moca/_checks.py, check_int).
    const py::int_ i(v);
    if (i > py::int_(std::numeric_limits<I>::max()) ||
        i < py::int_(std::numeric_limits<I>::min())) {
      throw std::invalid_argument(std::string(row.key) + " (" + std::string(py::str(v)) +
                                  ") must be in [" + std::to_string(std::numeric_limits<I>::min()) +
                                  ", " + std::to_string(std::numeric_limits<I>::max()) + "]");
    }
    out = i.cast<I>();
  }

  const py::dict& kwargs_;
  Scope scope_;
  std::string scope_name_;
  std::vector<std::string> keys_, taken_;
};

/// Sets the fields of `o` that `kwargs` names (KwargsReader); a keyword no row has is a
/// TypeError naming the nearest one.
template <class O>
void set_from_kwargs(O& o, const py::dict& kwargs, Scope scope, const std::string& scope_name) {
  KwargsReader reader(kwargs, scope, scope_name);
  O::schema(o, reader);
  const std::vector<std::string> unknown = reader.unknown();
  if (!unknown.empty()) {
    const std::string near = nearest_name(unknown.front(), reader.keys());
    throw py::type_error("unexpected keyword argument '" + unknown.front() + "'" +
                         (near.empty() ? "" : " (did you mean " + near + "?)"));
  }
}

/// The visitor of schema_rows: per Python row a dict key, flag, help, rule, default (the
/// field's value in the struct given), choices (enums) and scope.
class RowsWriter {
 public:
  template <class T>
  void operator()(const T& field, const Option& row) {
    if (row.surface == Surface::kCommandLine) return;
    py::dict d = describe(row);
    if constexpr (moca::schema_detail::is_optional<T>::value) {
      d["default"] = field ? py::cast(*field) : py::none();
    } else {
      d["default"] = py::cast(field);
    }
    rows_.append(d);
  }
  template <class E, std::size_t N>
  void operator()(const E& field, const Option& row, const EnumName<E> (&table)[N]) {
    if (row.surface == Surface::kCommandLine) return;
    py::dict d = describe(row);
    d["default"] = enum_name(table, field);
    py::list choices;
    for (const auto& r : table) choices.append(r.name);
    d["choices"] = choices;
    rows_.append(d);
  }
  py::list rows() const { return rows_; }

 private:
  static py::dict describe(const Option& row) {
    py::dict d;
    d["key"] = row.key;
    d["flag"] = row.flag;
    d["help"] = row.help;
    d["rule"] = row.rule != nullptr ? std::string(row.rule)
                                    : (row.range.unbounded() ? "" : row.range.text());
    d["scope"] = row.scope;
    d["choices"] = py::none();
    return d;
  }
  py::list rows_;
};

/// Every Python row of `o`'s schema (RowsWriter), its defaults those of `o`.
template <class O>
py::list schema_rows(const O& o) {
  RowsWriter writer;
  O::schema(o, writer);
  return writer.rows();
}

/// The visitor of with_keyword_names.
class KeywordRenamer {
 public:
  explicit KeywordRenamer(std::string& text) : text_(text) {}
  template <class T>
  void operator()(const T&, const Option& row) const {
    rename(row);
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const Option& row, const EnumName<E> (&)[N]) const {
    rename(row);
  }

 private:
  void rename(const Option& row) const {
    text_ = replace_all(std::move(text_), row.field(), row.key);
  }
  std::string& text_;
};

/// `message` with each `Owner::key` of O's rows replaced by the keyword `key`, then any other
/// `SomethingOptions::key` (a nested struct's field the library names, DatasetOptions::modalities
/// in a protocol's message) by `key`: Python's keywords are the fields' keys.
template <class O>
std::string with_keyword_names(std::string message) {
  const O o{};
  O::schema(o, KeywordRenamer(message));
  static const std::string kTail = "Options::";
  for (size_t at = message.find(kTail); at != std::string::npos; at = message.find(kTail, at)) {
    size_t start = at;
    while (start > 0 && std::isalnum(static_cast<unsigned char>(message[start - 1])) != 0) {
      --start;
    }
    const bool owner = start < at && std::isupper(static_cast<unsigned char>(message[start])) != 0;
    if (owner) {
      message.erase(start, at + kTail.size() - start);
      at = start;
    } else {
      at += kTail.size();
    }
  }
  return message;
}

/// Refuses each option of `unused` (a struct's unused_options()) that `kwargs` gives, None
/// aside: std::invalid_argument (a ValueError) `key (value) takes no effect: why`, as the
/// programs refuse the flag.
inline void refuse_unused(const std::vector<UnusedOption>& unused, const py::dict& kwargs) {
  for (const UnusedOption& u : unused) {
    const std::string key = u.field.substr(u.field.rfind(':') + 1);
    if (kwargs.contains(key) && !kwargs[py::str(key)].is_none()) {
      throw std::invalid_argument(key + " (" + std::string(py::str(kwargs[py::str(key)])) +
                                  ") takes no effect: " + u.why);
    }
  }
}

}  // namespace moca::python
