#pragma once
/// \file error_text.hpp
/// Text for error messages: exception texts without backtraces, untrusted bytes made printable.
#include <cstddef>
#include <exception>
#include <string>

namespace moca {

/// e.what() without a C++ backtrace: LibTorch's c10::Error appends one ("Exception raised
/// from ..."); that part and any trailing blank lines are dropped.
std::string exception_text(const std::exception& e);

/// `bytes` made safe for a one-line message: printable ASCII stays, backslash becomes "\\",
/// tab "\t", newline "\n", carriage return "\r", every other byte "\xHH". Longer input is cut
/// at `max_length` input bytes and "..." appended.
std::string printable(const std::string& bytes, std::size_t max_length = 80);

}  // namespace moca
