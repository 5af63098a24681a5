#pragma once
/// \file gnuplot.hpp
/// Running gnuplot on a script that the caller wrote (through write_output_text), so a PNG
/// appears atomically: the script writes `tmp_png`, which is renamed to `png` on success.
/// gnuplot is started with posix_spawnp and an argument vector {"gnuplot", script}: no shell
/// reads the script's path, so any file name (quotes, spaces, `$`) reaches gnuplot as it is.
#include <string>

namespace moca {

/// Where gnuplot's output goes.
enum class GnuplotOutput {
  kStdout,   ///< stdout and stderr both onto this process's stdout (a shell's `2>&1`)
  kDiscard,  ///< both to /dev/null
};

/// Whether an executable regular file `gnuplot` is in one of PATH's folders (searched here, no
/// shell; an empty PATH entry is the current folder, as execvp reads it).
bool gnuplot_available();

/// `s` as a gnuplot single-quoted string literal: quotes around it, each `'` inside doubled
/// (gnuplot's escape in single-quoted strings), so a script can name any path.
std::string gnuplot_quoted(const std::string& s);

/// Runs `gnuplot script` (posix_spawnp, no shell) and waits for it. Returns gnuplot's exit
/// status, 128 + the signal's number when a signal ended it, or 127 when it could not be started
/// (not on PATH), as a shell reports them.
int run_gnuplot_script(const std::string& script, GnuplotOutput output = GnuplotOutput::kStdout);

/// Runs `gnuplot script`; the script must set its output to `tmp_png`. On success renames
/// `tmp_png` to `png`; otherwise removes it and throws std::runtime_error("who: gnuplot ...")
/// naming the script (and that gnuplot is missing, when it is).
void run_gnuplot(const std::string& script, const std::string& tmp_png, const std::string& png,
                 const std::string& who);

}  // namespace moca
