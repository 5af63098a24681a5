#pragma once
/// \file study_statistics.hpp
/// Statistics of a multi-seed policy study (simulations/policy_study, docs/studies.md): the
/// two-level bootstrap of a rank statistic over policies and seeds, the partial rank correlation
/// controlling for mask ratio, Kendall's tau within ratio groups, paired differences over seeds,
/// between-seed spread, the smallest detectable correlation and the verdict rule.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace moca::sim {

/// One policy of a study: its score (with the mask-draw standard error) and one outcome value
/// per seed.
struct PolicyData {
  std::string policy;            ///< canonical spec
  std::string family;            ///< e.g. "cross"
  double ratio = 0.0;            ///< masked fraction (the covariate of the partial correlation)
  std::string group;             ///< ratio group for within-ratio ordering, e.g. "0.75"
  double score = 0.0;            ///< E_m[Phi(m)]
  double score_se = 0.0;         ///< its standard error over mask draws (>= 0)
  std::vector<double> outcomes;  ///< one value per seed (>= 1, finite)
};

/// Mean of `v` (non-empty).
double mean_of(const std::vector<double>& v);

/// Sample standard deviation (n - 1 denominator); 0 for a single value.
double sample_sd(const std::vector<double>& v);

/// First-order partial Spearman correlation of x and y controlling for z: the partial Pearson
/// correlation (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)) of the average ranks.
/// `degenerate` is set (and 0 returned) when a variable is constant or |r_xz| or |r_yz| is 1.
/// std::invalid_argument for unequal sizes, n < 4 or non-finite values.
double partial_spearman(const std::vector<double>& x, const std::vector<double>& y,
                        const std::vector<double>& z, bool* degenerate = nullptr);

/// Kendall's tau-b counted over the pairs (i, j) with groups[i] == groups[j] only (a stratified
/// tau: does x order y within each group?). `degenerate` when no such pair is untied in x or y.
double within_group_kendall(const std::vector<double>& x, const std::vector<double>& y,
                            const std::vector<std::string>& groups, bool* degenerate = nullptr);

/// The per-policy view a statistic sees in one (re)sample: scores, mean outcomes, ratios, groups.
struct PolicySample {
  std::vector<double> score, outcome, ratio;
  std::vector<std::string> group;
};
/// A statistic of a sample; sets *degenerate when it is undefined for that sample.
using PolicyStatistic = std::function<double(const PolicySample&, bool* degenerate)>;

/// A statistic with its two-level percentile bootstrap 95% interval.
struct BootstrapEstimate {
  double value = 0.0;       ///< on the full data (policy means over all seeds, scores as given)
  double ci_low = 0.0;      ///< 2.5% percentile
  double ci_high = 0.0;     ///< 97.5% percentile
  int resamples = 0;        ///< non-degenerate resamples used
  bool degenerate = false;  ///< the statistic is undefined on the full data (no CI then)
};

/// Two-level bootstrap: each resample draws the policies with replacement, then for each drawn
/// policy its seeds with replacement (its outcome is the mean of the drawn seeds), and when
/// `perturb_scores` adds N(0, score_se^2) to each original policy's score (one draw per policy
/// and resample). Degenerate resamples are redrawn (at most 20 * resamples tries). Seeded.
/// std::invalid_argument for fewer than 3 policies, a policy without outcomes, non-finite values
/// or resamples < 100; std::runtime_error when every resample is degenerate.
BootstrapEstimate two_level_bootstrap(const std::vector<PolicyData>& policies,
                                      const PolicyStatistic& statistic, int resamples,
                                      std::uint64_t seed, bool perturb_scores = true);

/// The statistics the study reports, as PolicyStatistic.
PolicyStatistic spearman_statistic();              ///< Spearman(score, outcome)
PolicyStatistic kendall_statistic();               ///< Kendall tau-b(score, outcome)
PolicyStatistic partial_spearman_statistic();      ///< partial Spearman controlling for ratio
PolicyStatistic within_ratio_kendall_statistic();  ///< Kendall within ratio groups

/// Paired difference a_s - b_s over seeds s: mean, SD and Student-t 95% CI with n - 1 df.
struct PairedDifferenceCI {
  double mean = 0.0, sd = 0.0, ci_low = 0.0, ci_high = 0.0;
  int n = 0;
};
/// std::invalid_argument for unequal sizes, n < 2 or non-finite values.
PairedDifferenceCI paired_difference(const std::vector<double>& a, const std::vector<double>& b);

/// The smallest |rho| a two-sided test at level `alpha` detects with probability `power` among
/// n policies: tanh((z_{1-alpha/2} + z_power) * sqrt(1.06 / (n - 3))) (Fisher z with the Spearman
/// variance factor 1.06, Fieller et al. 1957). std::invalid_argument for n < 4 or alpha, power
/// outside (0, 1).
double smallest_detectable_rho(int n, double alpha = 0.05, double power = 0.8);

/// The verdict of docs/studies.md for a correlation whose predicted sign is `predicted_sign`
/// (+1 or -1): with [lo, hi] the CI of sign * rho, "predicts" when lo > 0, "does not predict"
/// when hi < rho_min, "cannot tell at this power" otherwise; "cannot tell at this power" for a
/// degenerate estimate and when rho_min >= 1 (too few policies to detect any correlation).
std::string verdict(const BootstrapEstimate& estimate, int predicted_sign, double rho_min);

}  // namespace moca::sim
