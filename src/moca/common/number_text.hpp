#pragma once
/// \file number_text.hpp
/// Numbers in messages and reports: the one formatter (masking::format_number is this one).
#include <string>

namespace moca {

/// The shortest decimal text of at most `max_digits` significant digits that parses back to
/// exactly `value` (0.75 -> "0.75", 0.1 -> "0.1"); integers below 10^max_digits (10^15 from 15
/// digits on) in full ("42"); a value that needs more digits is printed as printf's
/// `%.{max_digits}g`. With 17 digits every double round-trips; with 12 this is the text of an
/// ostream with precision(12), with 6 that of `%g`.
std::string format_number(double value, int max_digits = 17);

/// printf's `%.{digits}f`: fixed-point text with `digits` (>= 0) decimals, for the columns of
/// tables and for rounded values in messages (0.75 with 4 digits -> "0.7500").
std::string format_fixed(double value, int digits);

}  // namespace moca
