#pragma once
/// \file torch_error.hpp
/// Readable messages of exceptions that may come from LibTorch (torch-free header).
#include <exception>
#include <string>

namespace moca::model {

/// e.what(), without the C++ backtrace that LibTorch's c10::Error appends.
std::string error_text(const std::exception& e);

}  // namespace moca::model
