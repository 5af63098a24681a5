#include "moca/model/train/detail/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace moca::model {

ProgressBar::ProgressBar(std::ostream& os, bool enabled, bool interactive)
    : os_(os), enabled_(enabled), interactive_(interactive), last_() {}

bool ProgressBar::stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = std::lround(s);
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", t);
  }
  return buf;
}

std::string ProgressBar::line(int epoch, int epochs, long step, long steps, double loss, double sps,
                              double eta) const {
  constexpr int kWidth = 20;
  const int filled = steps > 0 ? static_cast<int>(kWidth * step / steps) : kWidth;
  std::ostringstream os;
  os << "epoch " << epoch + 1 << "/" << epochs << " [" << std::string(filled, '#')
     << std::string(kWidth - filled, '-') << "] " << step << "/" << steps << " loss ";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5f %.0f samples/s", loss, sps);
  os << buf;
  if (read_rate_ > 0) {
    std::snprintf(buf, sizeof buf, " read %.0f windows/s", read_rate_);
    os << buf;
  }
  os << " ETA " << format_duration(eta);
  return os.str();
}

void ProgressBar::update(int epoch, int epochs, long step, long steps, double loss, double sps,
                         double eta) {
  if (!enabled_ || !interactive_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && step != steps && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  os_ << "\r" << line(epoch, epochs, step, steps, loss, sps, eta) << "\033[K" << std::flush;
}

void ProgressBar::end_epoch(int epoch, int epochs, long steps, double loss, double sps,
                            double eta) {
  if (!enabled_) return;
  if (interactive_) {
    os_ << "\r" << line(epoch, epochs, steps, steps, loss, sps, eta) << "\033[K\n" << std::flush;
  } else {
    os_ << line(epoch, epochs, steps, steps, loss, sps, eta) << "\n" << std::flush;
  }
  drawn_ = false;
}

}  // namespace moca::model
