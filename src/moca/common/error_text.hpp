#pragma once
/// \file error_text.hpp
/// Text for error messages: exception texts without backtraces, untrusted bytes made printable,
/// and the one way validation errors are thrown.
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

namespace moca {

/// e.what() without a C++ backtrace: LibTorch's c10::Error appends one ("Exception raised
/// from ..."); that part and any trailing blank lines are dropped.
std::string exception_text(const std::exception& e);

/// `bytes` made safe for a one-line message: printable ASCII stays, backslash becomes "\\",
/// tab "\t", newline "\n", carriage return "\r", every other byte "\xHH". Longer input is cut
/// at `max_length` input bytes and "..." appended.
std::string printable(const std::string& bytes, std::size_t max_length = 80);

/// Throws std::invalid_argument("where: field (value) rule"), the wording of every validation
/// error, e.g. throw_invalid("ScoreOptions::validate()", "draws", "1", "must be >= 2").
/// An empty `where` drops the "where: " prefix (the programs' "--ratio (2) must be in (0, 1)").
[[noreturn]] void throw_invalid(const std::string& where, const std::string& field,
                                const std::string& value, const std::string& rule);

/// Throws std::invalid_argument("where: message") for errors that name no single value
/// ("x has 5 columns, expected C*L = 6"); an empty `where` throws `message` alone.
[[noreturn]] void throw_invalid(const std::string& where, const std::string& message);

/// The candidate nearest to `name`, for "did you mean" messages: the smallest edit distance
/// (Levenshtein) less twice the length of the common prefix, so `classes` -> `class_names`
/// rather than `channels`; ties go to the earlier candidate. "" when there are none.
std::string nearest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace moca
