#pragma once
/// \file progress.hpp
/// A one-line progress bar for training loops (torch-free). On a terminal it redraws one line
/// with '\r' at most 5 times a second; otherwise (logs, pipes) it prints one line per epoch.
#include <chrono>
#include <ostream>
#include <string>

namespace moca::model {

/// Progress of an epoch-based loop: "epoch 3/100 [#####-----] 12/36 loss 0.1234 830 samples/s
/// ETA 4m10s".
class ProgressBar {
 public:
  /// \param os stream to draw on (stderr); \param enabled false draws nothing;
  /// \param interactive redraw one line (true) or print a line per epoch (false).
  ProgressBar(std::ostream& os, bool enabled, bool interactive);
  /// Whether stderr is a terminal.
  static bool stderr_is_terminal();
  /// Reports iteration `step` (1-based) of `steps` in epoch `epoch` (0-based) of `epochs`.
  void update(int epoch, int epochs, long step, long steps, double loss, double samples_per_s,
              double eta_seconds);
  /// From now on the line also shows "read N windows/s" (a trainer reading from disk; 0 hides it).
  void set_read_rate(double windows_per_s) { read_rate_ = windows_per_s; }
  /// Ends an epoch (a newline, or the epoch's line when not interactive).
  void end_epoch(int epoch, int epochs, long steps, double loss, double samples_per_s,
                 double eta_seconds);

 private:
  std::string line(int epoch, int epochs, long step, long steps, double loss, double sps,
                   double eta) const;
  std::ostream& os_;
  bool enabled_, interactive_, drawn_ = false;
  double read_rate_ = 0.0;
  std::chrono::steady_clock::time_point last_;
};

/// "1h02m", "4m10s", "12s".
std::string format_duration(double seconds);

}  // namespace moca::model
