// Tests for enum_names.hpp: parse (names and aliases, the error lists every choice) and names.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "moca/common/enum_names.hpp"

namespace {
enum class Colour { kRed, kGreen, kBlue };
constexpr moca::EnumName<Colour> kColours[] = {
    {Colour::kRed, "red"}, {Colour::kGreen, "green"}, {Colour::kGreen, "verde"}};
}  // namespace

TEST_CASE("enum_names: parse, aliases, names and the error text") {
  using moca::enum_name;
  using moca::parse_enum;
  CHECK(parse_enum(kColours, "red", "--colour") == Colour::kRed);
  CHECK(parse_enum(kColours, "green", "--colour") == Colour::kGreen);
  CHECK(parse_enum(kColours, "verde", "--colour") == Colour::kGreen);  // an alias
  CHECK(enum_name(kColours, Colour::kGreen) == "green");               // the first name wins
  CHECK(moca::enum_choices(kColours) == "red, green, verde");
  CHECK_THROWS_WITH_AS(parse_enum(kColours, "Red", "--colour"),
                       "--colour (Red) must be one of: red, green, verde", std::invalid_argument);
  CHECK_THROWS_AS(enum_name(kColours, Colour::kBlue), std::logic_error);  // no row
}
