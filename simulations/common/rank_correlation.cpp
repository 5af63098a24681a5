#include "rank_correlation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace moca::sim {

namespace {
void check_sizes(const std::vector<double>& x, const std::vector<double>& y, const char* fn) {
  if (x.size() != y.size() || x.size() < 3) {
    throw std::invalid_argument(std::string(fn) + "(): need two samples of equal size >= 3 (got " +
                                std::to_string(x.size()) + " and " + std::to_string(y.size()) +
                                ")");
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      throw std::invalid_argument(std::string(fn) + "(): value " + std::to_string(i) +
                                  " is not finite");
    }
  }
}

double pearson(const std::vector<double>& a, const std::vector<double>& b, bool* degenerate) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  const bool deg = saa <= 0.0 || sbb <= 0.0;
  if (degenerate) *degenerate = deg;
  return deg ? 0.0 : sab / std::sqrt(saa * sbb);
}
}  // namespace

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  size_t i = 0;
  while (i < idx.size()) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = rank;
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y, bool* degenerate) {
  check_sizes(x, y, "spearman");
  return pearson(average_ranks(x), average_ranks(y), degenerate);
}

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y, bool* degenerate) {
  check_sizes(x, y, "kendall_tau_b");
  const size_t n = x.size();
  double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) {
        ++ties_x;
        ++ties_y;
      } else if (dx == 0) {
        ++ties_x;
      } else if (dy == 0) {
        ++ties_y;
      } else if ((dx > 0) == (dy > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  const double n0 = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  const double denom = std::sqrt((n0 - ties_x) * (n0 - ties_y));
  const bool deg = denom <= 0.0;
  if (degenerate) *degenerate = deg;
  return deg ? 0.0 : (concordant - discordant) / denom;
}

}  // namespace moca::sim
