#pragma once
/// \file option_schema.hpp
/// Every option declared once (as mlpack's PARAM_* macros declare a parameter once for all its
/// bindings). An options struct lists its options in one member template,
///
///     template <class O, class V> static void schema(O& o, V&& v) {
///       v(o.epochs, Option{"DownstreamOptions", "epochs", "--epochs", "training epochs",
///                          Range::at_least(1)});
///       v(o.protocol, Option{...}, kProtocolNames);  // an enum: its name table
///     }
///
/// and everything else is made from those rows: the programs' flags and their help
/// (tools/support/schema_options.hpp), hence --print-config, --config and the JSON "options";
/// the range checks and their messages (check_ranges below), which name `Owner::key` so that a
/// program rewrites them to its flag and Python to its keyword; and the Python keyword arguments
/// with their defaults and help (python/src/schema.hpp). `O` is the struct or const struct, so
/// one schema serves reading and writing. A row's `scope` says which programs or modes take it
/// (bits the struct defines); a program adds only the rows of its scope, and Python refuses a
/// keyword outside the chosen mode's scope, so no option is accepted and then ignored.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"

namespace moca {

/// The interval a number option must lie in. NaN is never in it; an infinity is in it only when
/// the interval is closed there or unbounded (at_least/above are open at infinity, so "> 0"
/// rejects inf).
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;

  static constexpr Range any() { return {}; }
  /// [lo, inf)
  static constexpr Range at_least(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), false, true};
  }
  /// (lo, inf)
  static constexpr Range above(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), true, true};
  }
  /// [lo, hi], [lo, hi), (lo, hi] or (lo, hi)
  static constexpr Range between(double lo, double hi, bool lo_open = false, bool hi_open = false) {
    return {lo, hi, lo_open, hi_open};
  }

  bool unbounded() const { return std::isinf(lo) && std::isinf(hi); }
  bool contains(double x) const {
    if (std::isnan(x)) return false;
    if (unbounded()) return true;
    const bool above_lo = lo_open ? x > lo : x >= lo;
    const bool below_hi = hi_open ? x < hi : x <= hi;
    return above_lo && below_hi;
  }
  /// The rule as messages and help write it: ">= 1", "> 0", "in [0, 1)".
  std::string text() const {
    if (std::isinf(hi)) return std::string(lo_open ? "> " : ">= ") + format_number(lo);
    if (std::isinf(lo)) return std::string(hi_open ? "< " : "<= ") + format_number(hi);
    return std::string("in ") + (lo_open ? "(" : "[") + format_number(lo) + ", " +
           format_number(hi) + (hi_open ? ")" : "]");
  }
};

/// Which programs or modes take an option: bits an options struct defines for its rows.
using Scope = unsigned;
inline constexpr Scope kEveryScope = ~0u;

/// Where a row is offered: the programs' command line, Python's keywords, or both.
enum class Surface { kBoth, kCommandLine, kPython };

/// One option: the row of a schema.
struct Option {
  const char* owner;           ///< the options struct, as messages name it ("DownstreamOptions")
  const char* key;             ///< the field's name: the Python keyword and the key of messages
  const char* flag;            ///< the programs' flag ("--batch")
  const char* help;            ///< one line for --help and the Python docstring
  Range range = Range::any();  ///< numbers: the values allowed (check_ranges)
  Scope scope = kEveryScope;   ///< where it applies (the struct's bits)
  /// The rule in words where `range` cannot say it (the check is then the struct's validate()):
  /// shown in help instead of the range.
  const char* rule = nullptr;
  Surface surface = Surface::kBoth;
  /// A list of strings: also comma-separated on the command line (`--x a,b` as `--x a --x b`).
  /// False for lists whose items may hold commas (policy specs, paths): the flag is repeated.
  bool comma_list = true;
  /// "Owner::key", the name library messages use.
  std::string field() const { return std::string(owner) + "::" + key; }
};

/// An option that the struct's other options leave without effect, and why: what a struct's
/// unused_options() lists, so that the programs refuse the flag when the user states it (and do
/// not record it otherwise) and Python refuses the keyword given.
struct UnusedOption {
  std::string field;  ///< `Owner::key`, as messages name it
  std::string why;    ///< e.g. "only generator data uses it; the data is hapt:DIR"
};

// (Not moca::detail: a caller with `using namespace moca;` and another module's detail in sight
// would find two.)
namespace schema_detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace schema_detail

/// The visitor of check_ranges: a number outside its row's range throws
/// std::invalid_argument "Owner::key (value) must be <range>".
struct RangeCheck {
  template <class T>
  void operator()(const T& value, const Option& o) const {
    using U = std::decay_t<T>;
    if constexpr (schema_detail::is_optional<U>::value) {
      if (value) (*this)(*value, o);
    } else if constexpr (std::is_arithmetic_v<U> && !std::is_same_v<U, bool>) {
      const double x = static_cast<double>(value);
      if (!o.range.contains(x)) {
        throw_invalid("", o.field(), format_number(x), "must be " + o.range.text());
      }
    }
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const Option&, const EnumName<E> (&)[N]) const {}
};

/// Checks every number of `o` against its row's range (the rows of O::schema).
template <class O>
void check_ranges(const O& o) {
  O::schema(o, RangeCheck{});
}

/// A row's key in `KEY=VALUE` settings (a study's `--set NAME.KEY=VALUE`): its flag without the
/// leading dashes ("sample-rate").
inline std::string flag_key(const Option& row) {
  std::string flag = row.flag;
  const size_t start = flag.find_first_not_of('-');
  return start == std::string::npos ? flag : flag.substr(start);
}

/// The visitor of set_option_text: parses `text` into the field whose flag key is `key`.
class TextAssign {
 public:
  TextAssign(std::string key, std::string text, std::string what)
      : key_(std::move(key)), text_(std::move(text)), what_(std::move(what)) {}

  template <class T>
  void operator()(T& field, const Option& row) {
    if (!matches(row)) return;
    found_ = true;
    assign(field, row);
  }
  template <class E, std::size_t N>
  void operator()(E& field, const Option& row, const EnumName<E> (&table)[N]) {
    if (!matches(row)) return;
    found_ = true;
    field = parse_enum(table, text_, what_);
  }
  bool found() const { return found_; }

 private:
  bool matches(const Option& row) const {
    return !found_ && row.surface != Surface::kPython && flag_key(row) == key_;
  }
  [[noreturn]] void bad(const std::string& rule) const {
    throw std::invalid_argument(what_ + " (" + text_ + ") must be " + rule);
  }
  double number() const {
    try {
      size_t used = 0;
      const double v = std::stod(text_, &used);
      if (used == text_.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    bad("a number");
  }
  template <class T>
  void assign(T& field, const Option& row) {
    using U = std::decay_t<T>;
    if constexpr (schema_detail::is_optional<U>::value) {
      typename U::value_type v{};
      assign(v, row);
      field = v;
    } else if constexpr (std::is_same_v<U, bool>) {
      if (text_ == "true" || text_ == "1" || text_ == "yes") {
        field = true;
      } else if (text_ == "false" || text_ == "0" || text_ == "no") {
        field = false;
      } else {
        bad("true or false");
      }
    } else if constexpr (std::is_integral_v<U>) {
      const double v = number();
      if (v != std::floor(v) || static_cast<double>(std::numeric_limits<U>::min()) > v ||
          v > static_cast<double>(std::numeric_limits<U>::max())) {
        bad("a whole number");
      }
      field = static_cast<U>(v);
    } else if constexpr (std::is_floating_point_v<U>) {
      field = static_cast<U>(number());
    } else if constexpr (std::is_same_v<U, std::string>) {
      field = text_;
    } else if constexpr (std::is_same_v<U, std::vector<std::string>>) {
      field.clear();
      if (!row.comma_list) {
        field.push_back(text_);
        return;
      }
      std::istringstream in(text_);
      for (std::string item; std::getline(in, item, ',');) field.push_back(item);
    } else {
      static_assert(sizeof(U) == 0, "set_option_text: a field type without a text form");
    }
  }

  std::string key_, text_, what_;
  bool found_ = false;
};

/// Sets the option of `o` whose flag key (flag_key) is `key` from `text`, as the command line
/// would (numbers, true/false, enum names, comma-separated lists); `what` names the setting in
/// messages ("--set adl.sample-rate (x) must be a number"). Returns false when no row of
/// O::schema has that key. Ranges are validate()'s, as for any other way of setting `o`.
template <class O>
bool set_option_text(O& o, const std::string& key, const std::string& text,
                     const std::string& what) {
  TextAssign assign(key, text, what);
  O::schema(o, assign);
  return assign.found();
}

/// The visitor of option_rows.
struct RowList {
  std::vector<Option> rows;
  template <class T>
  void operator()(const T&, const Option& row) {
    rows.push_back(row);
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const Option& row, const EnumName<E> (&)[N]) {
    rows.push_back(row);
  }
};

/// The rows of O::schema, in order.
template <class O>
std::vector<Option> option_rows() {
  const O o{};
  RowList list;
  O::schema(o, list);
  return list.rows;
}

}  // namespace moca
