#include "moca/common/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace moca {

bool gnuplot_available() {
  return std::system("command -v gnuplot > /dev/null 2>&1") == 0;
}

void run_gnuplot(const std::string& script, const std::string& tmp_png, const std::string& png,
                 const std::string& who) {
  if (!gnuplot_available()) {
    throw std::runtime_error(who + ": gnuplot not found (install gnuplot-nox); the script " +
                             script + " was written");
  }
  const std::string cmd = "gnuplot '" + script + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || std::rename(tmp_png.c_str(), png.c_str()) != 0) {
    std::remove(tmp_png.c_str());
    throw std::runtime_error(who + ": gnuplot failed on " + script + " (status " +
                             std::to_string(rc) + ")");
  }
}

}  // namespace moca
