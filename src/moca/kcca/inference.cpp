#include "moca/kcca/inference.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moca/common/error_text.hpp"
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
    throw_invalid("bartlett_test()",
                  "p (" + std::to_string(p) + ") and q (" + std::to_string(q) + ") must be >= 1");
  }
  const double mult = n - 1 - (p + q + 1) / 2.0;
  if (!(mult > 0.0)) {
    throw_invalid("bartlett_test()", "n (" + std::to_string(n) +
                                         ") must exceed (p + q + 3) / 2 (p = " + std::to_string(p) +
                                         ", q = " + std::to_string(q) + ")");
  }
  if (!(alpha > 0.0 && alpha < 1.0)) {
    throw_invalid("bartlett_test()", "alpha (" + format_number(alpha, 12) + ") must be in (0, 1)");
  }
  const int m = std::min(p, q);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(m);
  const Eigen::Index given = std::min<Eigen::Index>(m, correlations.size());
  r.head(given) = correlations.head(given);
  for (Eigen::Index i = 0; i < correlations.size(); ++i) {
    if (!(correlations(i) >= 0.0 && correlations(i) <= 1.0)) {
      throw_invalid("bartlett_test()", "correlation " + std::to_string(i) + " (" +
                                           format_number(correlations(i), 12) +
                                           ") must be in [0, 1]");
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

namespace {

/// statistics(rows) with its length checked against `size` (-1: any, the first call).
Eigen::VectorXd checked(const RowStatistics& statistics, const std::vector<Eigen::Index>& rows,
                        Eigen::Index size, const char* who) {
  Eigen::VectorXd v = statistics(rows);
  if (size >= 0 && v.size() != size) {
    throw std::runtime_error(std::string(who) + ": the statistic returned " +
                             std::to_string(v.size()) + " values, first " + std::to_string(size));
  }
  if (v.size() == 0) throw std::runtime_error(std::string(who) + ": the statistic is empty");
  return v;
}

}  // namespace

std::vector<BootstrapResult> bootstrap_each(Eigen::Index n, const RowStatistics& statistics,
                                            int resamples, double level, std::uint64_t seed) {
  if (n < 2) {
    throw_invalid("bootstrap()", "n (" + std::to_string(n) + ") must be >= 2");
  }
  if (resamples < 2) {
    throw_invalid("bootstrap()", "resamples (" + std::to_string(resamples) + ") must be >= 2");
  }
  if (!(level > 0.0 && level < 1.0)) {
    throw_invalid("bootstrap()", "level (" + format_number(level, 12) + ") must be in (0, 1)");
  }
  std::vector<Eigen::Index> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), Eigen::Index{0});
  const Eigen::VectorXd estimate = checked(statistics, rows, -1, "bootstrap()");
  std::vector<BootstrapResult> res(static_cast<size_t>(estimate.size()));
  for (size_t k = 0; k < res.size(); ++k) {
    res[k].level = level;
    res[k].estimate = estimate(static_cast<Eigen::Index>(k));
  }
  Rng rng(seed);
  for (int b = 0; b < resamples; ++b) {
    for (auto& r : rows) r = uniform_int(rng, 0, n - 1);
    const Eigen::VectorXd v = checked(statistics, rows, estimate.size(), "bootstrap()");
    if (!v.allFinite()) {
      throw std::runtime_error("bootstrap(): statistic is not finite on resample " +
                               std::to_string(b));
    }
    for (size_t k = 0; k < res.size(); ++k) {
      res[k].replicates.push_back(v(static_cast<Eigen::Index>(k)));
    }
  }
  const double a = (1.0 - level) / 2.0;
  for (BootstrapResult& r : res) {
    r.lower = quantile(r.replicates, a);
    r.upper = quantile(r.replicates, 1.0 - a);
    double mean = 0.0;
    for (double v : r.replicates) mean += v;
    mean /= resamples;
    double ss = 0.0;
    for (double v : r.replicates) ss += (v - mean) * (v - mean);
    r.std_error = std::sqrt(ss / (resamples - 1));
  }
  return res;
}

BootstrapResult bootstrap(Eigen::Index n, const RowStatistic& statistic, int resamples,
                          double level, std::uint64_t seed) {
  const RowStatistics one = [&](const std::vector<Eigen::Index>& rows) {
    return Eigen::VectorXd::Constant(1, statistic(rows));
  };
  return bootstrap_each(n, one, resamples, level, seed).front();
}

PermutationTestEach permutation_test_each(Eigen::Index n, const RowStatistics& statistics,
                                          int permutations, std::uint64_t seed) {
  if (n < 2) {
    throw_invalid("permutation_test()", "n (" + std::to_string(n) + ") must be >= 2");
  }
  if (permutations < 1) {
    throw_invalid("permutation_test()",
                  "permutations (" + std::to_string(permutations) + ") must be >= 1");
  }
  PermutationTestEach res;
  res.permutations = permutations;
  std::vector<Eigen::Index> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), Eigen::Index{0});
  res.observed = checked(statistics, perm, -1, "permutation_test()");
  const Eigen::Index k = res.observed.size();
  if (res.observed.hasNaN()) throw std::runtime_error("permutation_test(): statistic is NaN");
  // order(0..k-1): entries by observed value, largest first (ties by index).
  std::vector<Eigen::Index> order(static_cast<size_t>(k));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
    return res.observed(a) > res.observed(b);
  });
  Eigen::VectorXd exceed = Eigen::VectorXd::Zero(k);
  Eigen::VectorXd exceed_max = Eigen::VectorXd::Zero(k);
  Rng rng(seed);
  for (int b = 0; b < permutations; ++b) {
    shuffle(perm, rng);
    const Eigen::VectorXd t = checked(statistics, perm, k, "permutation_test()");
    if (t.hasNaN()) throw std::runtime_error("permutation_test(): statistic is NaN");
    double running_max = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = k - 1; j >= 0; --j) {  // successive maxima from the smallest entry up
      const Eigen::Index e = order[static_cast<size_t>(j)];
      running_max = std::max(running_max, t(e));
      if (t(e) >= res.observed(e)) exceed(e) += 1.0;
      if (running_max >= res.observed(e)) exceed_max(e) += 1.0;
    }
  }
  res.p_values = (exceed.array() + 1.0) / (permutations + 1.0);
  res.p_values_step_down = (exceed_max.array() + 1.0) / (permutations + 1.0);
  for (Eigen::Index j = 1; j < k; ++j) {  // monotone along the order
    const Eigen::Index e = order[static_cast<size_t>(j)];
    const Eigen::Index prev = order[static_cast<size_t>(j - 1)];
    res.p_values_step_down(e) = std::max(res.p_values_step_down(e), res.p_values_step_down(prev));
  }
  return res;
}

PermutationResult permutation_test(Eigen::Index n, const RowStatistic& statistic, int permutations,
                                   std::uint64_t seed) {
  const RowStatistics one = [&](const std::vector<Eigen::Index>& rows) {
    return Eigen::VectorXd::Constant(1, statistic(rows));
  };
  const PermutationTestEach each = permutation_test_each(n, one, permutations, seed);
  PermutationResult res;
  res.permutations = permutations;
  res.observed = each.observed(0);
  res.p_value = each.p_values(0);
  return res;
}

}  // namespace moca::kcca
