#pragma once
/// \file gnuplot.hpp
/// Running gnuplot on a script that the caller wrote (through write_output_text), so a PNG
/// appears atomically: the script writes `tmp_png`, which is renamed to `png` on success.
#include <string>

namespace moca {

/// Whether `gnuplot` is on PATH.
bool gnuplot_available();

/// Runs `gnuplot script`; the script must set its output to `tmp_png`. On success renames
/// `tmp_png` to `png`; otherwise removes it and throws std::runtime_error("who: gnuplot ...")
/// naming the script (and that gnuplot is missing, when it is).
void run_gnuplot(const std::string& script, const std::string& tmp_png, const std::string& png,
                 const std::string& who);

}  // namespace moca
