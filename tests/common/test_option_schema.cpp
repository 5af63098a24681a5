// option_schema.hpp: ranges, their text and the range check over a schema's rows.
#include "moca/common/option_schema.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using moca::Option;
using moca::Range;

enum class Color { kRed, kBlue };
constexpr moca::EnumName<Color> kColorNames[] = {{Color::kRed, "red"}, {Color::kBlue, "blue"}};

// A struct with a schema of every kind of row.
struct ToyOptions {
  int count = 3;
  double share = 0.5;
  std::optional<double> warmup;
  std::uint64_t seed = 7;
  bool flag = false;
  std::string name = "x";
  Color color = Color::kRed;
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* T = "ToyOptions";
    v(o.count, Option{T, "count", "--count", "how many", Range::at_least(1)});
    v(o.share, Option{T, "share", "--share", "a share", Range::between(0, 1, true, false)});
    v(o.warmup, Option{T, "warmup", "--warmup", "optional", Range::at_least(0)});
    v(o.seed, Option{T, "seed", "--seed", "seed"});
    v(o.flag, Option{T, "flag", "--flag", "a switch"});
    v(o.name, Option{T, "name", "--name", "a name"});
    v(o.color, Option{T, "color", "--color", "red | blue"}, kColorNames);
  }
};

// Collects the keys a schema visits.
struct Keys {
  std::vector<std::string>* keys;
  template <class T>
  void operator()(const T&, const Option& r) const {
    keys->push_back(r.key);
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const Option& r, const moca::EnumName<E> (&)[N]) const {
    keys->push_back(r.key);
  }
};

}  // namespace

TEST_CASE("Range: membership and the rule's text at the boundaries") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Range one = Range::at_least(1), pos = Range::above(0);
  const Range half_open = Range::between(0, 1, false, true),
              open_closed = Range::between(0, 1, true);
  CHECK(one.contains(1));
  CHECK_FALSE(one.contains(0.999));
  CHECK_FALSE(pos.contains(0));
  CHECK(pos.contains(1e-300));
  CHECK_FALSE(pos.contains(inf));  // open at infinity: "> 0" means a finite positive number
  CHECK(half_open.contains(0));
  CHECK_FALSE(half_open.contains(1));
  CHECK_FALSE(open_closed.contains(0));
  CHECK(open_closed.contains(1));
  for (const Range& r : {one, pos, half_open, open_closed, Range::any()})
    CHECK_FALSE(r.contains(nan));
  CHECK(Range::any().contains(-inf));
  CHECK(one.text() == ">= 1");
  CHECK(pos.text() == "> 0");
  CHECK(half_open.text() == "in [0, 1)");
  CHECK(open_closed.text() == "in (0, 1]");
  CHECK(Range::between(-inf, 2.5, false, true).text() == "< 2.5");
}

TEST_CASE("check_ranges: each number against its row, optional only when set") {
  ToyOptions o;
  CHECK_NOTHROW(moca::check_ranges(o));
  o.count = 0;
  CHECK_THROWS_WITH_AS(moca::check_ranges(o), "ToyOptions::count (0) must be >= 1",
                       std::invalid_argument);
  o.count = 2;
  o.share = 0.0;
  CHECK_THROWS_WITH_AS(moca::check_ranges(o), "ToyOptions::share (0) must be in (0, 1]",
                       std::invalid_argument);
  o.share = std::nan("");
  CHECK_THROWS_WITH_AS(moca::check_ranges(o), "ToyOptions::share (nan) must be in (0, 1]",
                       std::invalid_argument);
  o.share = 1.0;
  o.warmup = -0.5;  // an optional is checked when set...
  CHECK_THROWS_WITH_AS(moca::check_ranges(o), "ToyOptions::warmup (-0.5) must be >= 0",
                       std::invalid_argument);
  o.warmup.reset();  // ...and not when unset (control)
  CHECK_NOTHROW(moca::check_ranges(o));
}

TEST_CASE("a schema visits every row once, in order, through const and mutable structs") {
  std::vector<std::string> keys;
  const ToyOptions c;
  ToyOptions::schema(c, Keys{&keys});
  CHECK(keys ==
        std::vector<std::string>{"count", "share", "warmup", "seed", "flag", "name", "color"});
  CHECK(Option{"A", "b_c", "--b-c", ""}.field() == "A::b_c");
}

TEST_CASE("set_option_text: a row set from text by its flag key, as the command line would") {
  ToyOptions o;
  CHECK(moca::set_option_text(o, "count", "12", "count"));
  CHECK(o.count == 12);
  CHECK(moca::set_option_text(o, "share", "0.25", "share"));
  CHECK(o.share == 0.25);
  CHECK(moca::set_option_text(o, "warmup", "2.5", "warmup"));
  REQUIRE(o.warmup.has_value());
  CHECK(*o.warmup == 2.5);
  CHECK(moca::set_option_text(o, "seed", "18446744073709549568", "seed"));  // 2^64 - 2048
  CHECK(o.seed == 18446744073709549568ULL);
  CHECK(moca::set_option_text(o, "flag", "yes", "flag"));
  CHECK(o.flag);
  CHECK(moca::set_option_text(o, "flag", "0", "flag"));
  CHECK(!o.flag);
  CHECK(moca::set_option_text(o, "name", "a,b", "name"));
  CHECK(o.name == "a,b");  // a string keeps its commas
  CHECK(moca::set_option_text(o, "color", "blue", "color"));
  CHECK(o.color == Color::kBlue);
  // the control: a key no row has sets nothing and says so
  const ToyOptions before = o;
  CHECK(!moca::set_option_text(o, "colour", "red", "colour"));
  CHECK(o.color == before.color);
  // bad text names the setting, the text and the rule; ranges stay validate()'s
  CHECK_THROWS_WITH_AS(moca::set_option_text(o, "count", "1.5", "--set a.count"),
                       "--set a.count (1.5) must be a whole number", std::invalid_argument);
  CHECK_THROWS_WITH_AS(moca::set_option_text(o, "count", "-3x", "count"),
                       "count (-3x) must be a number", std::invalid_argument);
  CHECK_THROWS_WITH_AS(moca::set_option_text(o, "seed", "-1", "seed"),
                       "seed (-1) must be a whole number", std::invalid_argument);
  CHECK_THROWS_WITH_AS(moca::set_option_text(o, "flag", "maybe", "flag"),
                       "flag (maybe) must be true or false", std::invalid_argument);
  CHECK_THROWS_WITH_AS(moca::set_option_text(o, "color", "green", "color"),
                       "color (green) must be one of: red, blue", std::invalid_argument);
  CHECK(moca::set_option_text(o, "count", "0", "count"));  // in its type, out of its range
  CHECK_THROWS_AS(moca::check_ranges(o), std::invalid_argument);
}

TEST_CASE("option_rows and flag_key: the rows in schema order, keys without dashes") {
  const std::vector<Option> rows = moca::option_rows<ToyOptions>();
  REQUIRE(rows.size() == 7);
  CHECK(std::string(rows.front().key) == "count");
  CHECK(std::string(rows.back().key) == "color");
  CHECK(moca::flag_key(rows[1]) == "share");
  CHECK(moca::flag_key(Option{"X", "sample_rate", "--sample-rate", ""}) == "sample-rate");
}
