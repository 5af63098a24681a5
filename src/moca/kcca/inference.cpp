#include "moca/kcca/inference.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"

namespace moca::kcca {

namespace {

// Percentile with linear interpolation between order statistics (type 7).
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1.0) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

BartlettResult bartlett_test(const Eigen::VectorXd& correlations, int n, int p, int q,
                             double alpha) {
  if (p < 1 || q < 1) {
    throw std::invalid_argument("bartlett_test(): p (" + std::to_string(p) + ") and q (" +
                                std::to_string(q) + ") must be >= 1");
  }
  const double mult = n - 1 - (p + q + 1) / 2.0;
  if (!(mult > 0.0)) {
    throw std::invalid_argument("bartlett_test(): n (" + std::to_string(n) +
                                ") must exceed (p + q + 3) / 2 (p = " + std::to_string(p) +
                                ", q = " + std::to_string(q) + ")");
  }
  if (!(alpha > 0.0 && alpha < 1.0)) {
    throw std::invalid_argument("bartlett_test(): alpha (" + format_number(alpha, 12) +
                                ") must be in (0, 1)");
  }
  const int m = std::min(p, q);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(m);
  const Eigen::Index given = std::min<Eigen::Index>(m, correlations.size());
  r.head(given) = correlations.head(given);
  for (Eigen::Index i = 0; i < correlations.size(); ++i) {
    if (!(correlations(i) >= 0.0 && correlations(i) <= 1.0)) {
      throw std::invalid_argument("bartlett_test(): correlation " + std::to_string(i) + " (" +
                                  format_number(correlations(i), 12) + ") must be in [0, 1]");
    }
  }
  BartlettResult res;
  res.nonzero = m;
  bool found = false;
  for (int k = 0; k < m; ++k) {
    BartlettStep s;
    s.k = k;
    double log_lambda = 0.0;
    for (int i = k; i < m; ++i) log_lambda += std::log1p(-r(i) * r(i));
    s.wilks = std::exp(log_lambda);
    s.statistic = -mult * log_lambda;
    s.df = static_cast<double>(p - k) * static_cast<double>(q - k);
    boost::math::chi_squared chi(s.df);
    // A correlation of exactly 1 (collinear views) makes Wilks' lambda 0 and the statistic
    // infinite: H0_k is rejected with p = 0, the limit of the test as rho -> 1.
    s.p_value = std::isinf(s.statistic)
                    ? 0.0
                    : boost::math::cdf(boost::math::complement(chi, std::max(0.0, s.statistic)));
    if (!found && s.p_value >= alpha) {
      res.nonzero = k;
      found = true;
    }
    res.steps.push_back(s);
  }
  return res;
}

BootstrapResult bootstrap(Eigen::Index n, const RowStatistic& statistic, int resamples,
                          double level, std::uint64_t seed) {
  if (n < 2) {
    throw std::invalid_argument("bootstrap(): n (" + std::to_string(n) + ") must be >= 2");
  }
  if (resamples < 2) {
    throw std::invalid_argument("bootstrap(): resamples (" + std::to_string(resamples) +
                                ") must be >= 2");
  }
  if (!(level > 0.0 && level < 1.0)) {
    throw std::invalid_argument("bootstrap(): level (" + format_number(level, 12) +
                                ") must be in (0, 1)");
  }
  BootstrapResult res;
  res.level = level;
  std::vector<Eigen::Index> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), Eigen::Index{0});
  res.estimate = statistic(rows);
  Rng rng(seed);
  for (int b = 0; b < resamples; ++b) {
    for (auto& r : rows) r = uniform_int(rng, 0, n - 1);
    const double v = statistic(rows);
    if (!std::isfinite(v)) {
      throw std::runtime_error("bootstrap(): statistic is not finite on resample " +
                               std::to_string(b));
    }
    res.replicates.push_back(v);
  }
  const double a = (1.0 - level) / 2.0;
  res.lower = quantile(res.replicates, a);
  res.upper = quantile(res.replicates, 1.0 - a);
  double mean = 0.0;
  for (double v : res.replicates) mean += v;
  mean /= resamples;
  double ss = 0.0;
  for (double v : res.replicates) ss += (v - mean) * (v - mean);
  res.std_error = std::sqrt(ss / (resamples - 1));
  return res;
}

PermutationResult permutation_test(Eigen::Index n, const RowStatistic& statistic, int permutations,
                                   std::uint64_t seed) {
  if (n < 2) {
    throw std::invalid_argument("permutation_test(): n (" + std::to_string(n) + ") must be >= 2");
  }
  if (permutations < 1) {
    throw std::invalid_argument("permutation_test(): permutations (" +
                                std::to_string(permutations) + ") must be >= 1");
  }
  PermutationResult res;
  res.permutations = permutations;
  std::vector<Eigen::Index> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), Eigen::Index{0});
  res.observed = statistic(perm);
  Rng rng(seed);
  int exceed = 0;
  for (int b = 0; b < permutations; ++b) {
    shuffle(perm, rng);
    if (statistic(perm) >= res.observed) ++exceed;
  }
  res.p_value = (1.0 + exceed) / (permutations + 1.0);
  return res;
}

}  // namespace moca::kcca
