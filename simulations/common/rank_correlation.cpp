#include "rank_correlation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "moca/common/random.hpp"

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

RankCorrelations rank_correlations(const std::vector<double>& x, const std::vector<double>& y,
                                   int resamples, std::uint64_t seed) {
  check_sizes(x, y, "rank_correlations");
  if (resamples < 100) {
    throw std::invalid_argument("rank_correlations(): resamples (" + std::to_string(resamples) +
                                ") must be >= 100");
  }
  RankCorrelations out;
  out.spearman.value = spearman(x, y);
  out.kendall.value = kendall_tau_b(x, y);
  Rng rng(seed);
  std::vector<double> s, k, bx(x.size()), by(y.size());
  const long max_tries = 20L * resamples;
  for (long t = 0; t < max_tries && static_cast<int>(s.size()) < resamples; ++t) {
    for (size_t i = 0; i < x.size(); ++i) {
      const auto j = static_cast<size_t>(uniform_int(rng, 0, static_cast<long>(x.size()) - 1));
      bx[i] = x[j];
      by[i] = y[j];
    }
    bool d1 = false, d2 = false;
    const double rs = spearman(bx, by, &d1);
    const double rk = kendall_tau_b(bx, by, &d2);
    if (d1 || d2) continue;
    s.push_back(rs);
    k.push_back(rk);
  }
  auto percentile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  if (s.empty()) {
    throw std::runtime_error("rank_correlations(): every bootstrap resample was degenerate");
  }
  out.spearman = {out.spearman.value, percentile(s, 0.025), percentile(s, 0.975),
                  static_cast<int>(s.size())};
  out.kendall = {out.kendall.value, percentile(k, 0.025), percentile(k, 0.975),
                 static_cast<int>(k.size())};
  return out;
}

}  // namespace moca::sim
