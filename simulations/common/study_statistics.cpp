#include "study_statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "rank_correlation.hpp"

namespace moca::sim {

namespace {

void check_finite(const std::vector<double>& v, const std::string& fn, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw std::invalid_argument(fn + "(): " + what + " " + std::to_string(i) + " is not finite");
    }
  }
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

PolicySample full_sample(const std::vector<PolicyData>& policies) {
  PolicySample s;
  for (const PolicyData& p : policies) {
    s.score.push_back(p.score);
    s.outcome.push_back(mean_of(p.outcomes));
    s.ratio.push_back(p.ratio);
    s.group.push_back(p.group);
  }
  return s;
}

}  // namespace

double mean_of(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("mean_of(): empty sample");
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sample_sd(const std::vector<double>& v) {
  const double m = mean_of(v);
  if (v.size() < 2) return 0.0;
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double partial_spearman(const std::vector<double>& x, const std::vector<double>& y,
                        const std::vector<double>& z, bool* degenerate) {
  if (x.size() != y.size() || x.size() != z.size() || x.size() < 4) {
    throw std::invalid_argument("partial_spearman(): need three samples of equal size >= 4 (got " +
                                std::to_string(x.size()) + ", " + std::to_string(y.size()) + ", " +
                                std::to_string(z.size()) + ")");
  }
  check_finite(z, "partial_spearman", "z value");
  bool d1 = false, d2 = false, d3 = false;
  const double rxy = spearman(x, y, &d1);
  const double rxz = spearman(x, z, &d2);
  const double ryz = spearman(y, z, &d3);
  const double denom = (1.0 - rxz * rxz) * (1.0 - ryz * ryz);
  const bool deg = d1 || d2 || d3 || !(denom > 1e-12);
  if (degenerate) *degenerate = deg;
  if (deg) return 0.0;
  return std::clamp((rxy - rxz * ryz) / std::sqrt(denom), -1.0, 1.0);
}

double within_group_kendall(const std::vector<double>& x, const std::vector<double>& y,
                            const std::vector<std::string>& groups, bool* degenerate) {
  if (x.size() != y.size() || x.size() != groups.size()) {
    throw std::invalid_argument("within_group_kendall(): sizes differ (" +
                                std::to_string(x.size()) + ", " + std::to_string(y.size()) + ", " +
                                std::to_string(groups.size()) + ")");
  }
  check_finite(x, "within_group_kendall", "x value");
  check_finite(y, "within_group_kendall", "y value");
  double concordant = 0, discordant = 0, pairs = 0, ties_x = 0, ties_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      if (groups[i] != groups[j]) continue;
      ++pairs;
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0) ++ties_x;
      if (dy == 0) ++ties_y;
      if (dx != 0 && dy != 0) ((dx > 0) == (dy > 0) ? concordant : discordant) += 1;
    }
  }
  const double denom = std::sqrt((pairs - ties_x) * (pairs - ties_y));
  const bool deg = !(denom > 0);
  if (degenerate) *degenerate = deg;
  return deg ? 0.0 : (concordant - discordant) / denom;
}

BootstrapEstimate two_level_bootstrap(const std::vector<PolicyData>& policies,
                                      const PolicyStatistic& statistic, int resamples,
                                      std::uint64_t seed, bool perturb_scores) {
  const std::string fn = "two_level_bootstrap";
  if (policies.size() < 3) {
    throw std::invalid_argument(fn + "(): " + std::to_string(policies.size()) +
                                " policies; need at least 3");
  }
  if (resamples < 100) {
    throw std::invalid_argument(fn + "(): resamples (" + std::to_string(resamples) +
                                ") must be >= 100");
  }
  for (const PolicyData& p : policies) {
    if (p.outcomes.empty())
      throw std::invalid_argument(fn + "(): policy " + p.policy + " has no outcomes");
    check_finite(p.outcomes, fn, ("outcome of " + p.policy).c_str());
    check_finite({p.score, p.score_se, p.ratio}, fn, ("score/se/ratio of " + p.policy).c_str());
    if (p.score_se < 0) throw std::invalid_argument(fn + "(): score_se of " + p.policy + " < 0");
  }
  BootstrapEstimate out;
  const PolicySample full = full_sample(policies);
  out.value = statistic(full, &out.degenerate);
  if (out.degenerate) {
    out.value = 0.0;
    return out;
  }
  Rng rng(seed);
  const auto k = static_cast<long>(policies.size());
  std::vector<double> values, noise(policies.size());
  PolicySample s;
  const long max_tries = 20L * resamples;
  for (long t = 0; t < max_tries && static_cast<int>(values.size()) < resamples; ++t) {
    for (size_t i = 0; i < policies.size(); ++i) {
      noise[i] = perturb_scores ? policies[i].score_se * standard_normal(rng) : 0.0;
    }
    s.score.clear();
    s.outcome.clear();
    s.ratio.clear();
    s.group.clear();
    for (long i = 0; i < k; ++i) {
      const auto j = static_cast<size_t>(uniform_int(rng, 0, k - 1));
      const PolicyData& p = policies[j];
      const auto m = static_cast<long>(p.outcomes.size());
      double sum = 0;
      for (long r = 0; r < m; ++r)
        sum += p.outcomes[static_cast<size_t>(uniform_int(rng, 0, m - 1))];
      s.score.push_back(p.score + noise[j]);
      s.outcome.push_back(sum / static_cast<double>(m));
      s.ratio.push_back(p.ratio);
      s.group.push_back(p.group);
    }
    bool deg = false;
    const double v = statistic(s, &deg);
    if (!deg) values.push_back(v);
  }
  if (values.empty()) throw std::runtime_error(fn + "(): every bootstrap resample was degenerate");
  out.ci_low = percentile(values, 0.025);
  out.ci_high = percentile(values, 0.975);
  out.resamples = static_cast<int>(values.size());
  return out;
}

PolicyStatistic spearman_statistic() {
  return [](const PolicySample& s, bool* deg) { return spearman(s.score, s.outcome, deg); };
}

PolicyStatistic kendall_statistic() {
  return [](const PolicySample& s, bool* deg) { return kendall_tau_b(s.score, s.outcome, deg); };
}

PolicyStatistic partial_spearman_statistic() {
  return [](const PolicySample& s, bool* deg) {
    return partial_spearman(s.score, s.outcome, s.ratio, deg);
  };
}

PolicyStatistic within_ratio_kendall_statistic() {
  return [](const PolicySample& s, bool* deg) {
    return within_group_kendall(s.score, s.outcome, s.group, deg);
  };
}

PairedDifferenceCI paired_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) {
    throw std::invalid_argument("paired_difference(): need two samples of equal size >= 2 (got " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                ")");
  }
  check_finite(a, "paired_difference", "a value");
  check_finite(b, "paired_difference", "b value");
  std::vector<double> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  PairedDifferenceCI out;
  out.n = static_cast<int>(d.size());
  out.mean = mean_of(d);
  out.sd = sample_sd(d);
  const boost::math::students_t t(static_cast<double>(out.n - 1));
  const double half = boost::math::quantile(t, 0.975) * out.sd / std::sqrt(out.n);
  out.ci_low = out.mean - half;
  out.ci_high = out.mean + half;
  return out;
}

double smallest_detectable_rho(int n, double alpha, double power) {
  if (n < 4 || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1)) {
    throw std::invalid_argument(
        "smallest_detectable_rho(): need n >= 4 and alpha, power in (0, 1) "
        "(got n " +
        std::to_string(n) + ", alpha " + std::to_string(alpha) + ", power " +
        std::to_string(power) + ")");
  }
  const boost::math::normal z;
  const double q = boost::math::quantile(z, 1 - alpha / 2) + boost::math::quantile(z, power);
  return std::tanh(q * std::sqrt(1.06 / (n - 3)));
}

std::string verdict(const BootstrapEstimate& estimate, int predicted_sign, double rho_min) {
  if (predicted_sign != 1 && predicted_sign != -1) {
    throw std::invalid_argument("verdict(): predicted_sign (" + std::to_string(predicted_sign) +
                                ") must be +1 or -1");
  }
  // No correlation is detectable (rho_min >= 1, e.g. 3 policies): nothing can be concluded.
  if (estimate.degenerate || estimate.resamples == 0 || rho_min >= 1.0) {
    return "cannot tell at this power";
  }
  const double lo = predicted_sign > 0 ? estimate.ci_low : -estimate.ci_high;
  const double hi = predicted_sign > 0 ? estimate.ci_high : -estimate.ci_low;
  if (lo > 0) return "predicts";
  if (hi < rho_min) return "does not predict";
  return "cannot tell at this power";
}

}  // namespace moca::sim
