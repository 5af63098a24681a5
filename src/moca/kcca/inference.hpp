#pragma once
/// \file inference.hpp
/// Inference for canonical correlations: Bartlett's chi-square test on Wilks' lambda for the
/// number of non-zero correlations, seeded bootstrap percentile intervals, and permutation-test
/// p-values.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <vector>

namespace moca::kcca {

/// One row of Bartlett's sequential test: H0_k "only the first k correlations are non-zero".
struct BartlettStep {
  int k = 0;               ///< number of correlations assumed non-zero under H0
  double wilks = 1.0;      ///< Wilks' lambda prod_{i > k} (1 - rho_i^2)
  double statistic = 0.0;  ///< -(n - 1 - (p + q + 1) / 2) log(lambda)
  double df = 0.0;         ///< (p - k)(q - k)
  double p_value = 1.0;    ///< upper tail of chi-square(df)
};

/// Result of bartlett_test().
struct BartlettResult {
  std::vector<BartlettStep> steps;  ///< k = 0 .. min(p, q) - 1
  /// Estimated number of non-zero correlations: the first k whose H0_k is not rejected at
  /// `alpha` (min(p, q) if all are rejected).
  int nonzero = 0;
};

/// Bartlett's chi-square approximation to Wilks' lambda for n samples of views with p and q
/// dimensions (Bartlett 1938; Mardia, Kent & Bibby §10.2). `correlations` are all min(p, q)
/// sample canonical correlations (missing trailing ones count as 0). Valid for linear CCA of
/// roughly Gaussian data with n >> p + q; for regularised KCCA the statistic is heuristic.
/// Throws std::invalid_argument unless p, q >= 1, n > p + q + 1 (the multiplier must be > 0),
/// alpha in (0, 1) and every correlation in [0, 1]. A correlation of 1 (collinear views) gives
/// wilks 0, an infinite statistic and p_value 0 for the steps that include it.
BartlettResult bartlett_test(const Eigen::VectorXd& correlations, int n, int p, int q,
                             double alpha = 0.05);

/// Result of a bootstrap.
struct BootstrapResult {
  double estimate = 0.0;           ///< statistic on the original sample
  double lower = 0.0;              ///< percentile interval lower end
  double upper = 0.0;              ///< percentile interval upper end
  double std_error = 0.0;          ///< standard deviation of the replicates
  double level = 0.95;             ///< confidence level
  std::vector<double> replicates;  ///< B statistics on resamples, in draw order
};

/// A statistic of a sample given by row indices into the caller's data (with repetitions for a
/// bootstrap resample, a permutation for a permutation test).
using RowStatistic = std::function<double(const std::vector<Eigen::Index>& rows)>;

/// Several statistics of one sample (the canonical correlations of a resample or permutation),
/// always of the same length.
using RowStatistics = std::function<Eigen::VectorXd(const std::vector<Eigen::Index>& rows)>;

/// Nonparametric bootstrap: B resamples of n rows with replacement (seeded, portable), the
/// statistic on each, and the percentile interval at `level`. Throws std::invalid_argument
/// unless n >= 2, B >= 2 and level in (0, 1); std::runtime_error if the statistic returns a
/// non-finite value.
BootstrapResult bootstrap(Eigen::Index n, const RowStatistic& statistic, int resamples,
                          double level, std::uint64_t seed);

/// bootstrap() of each entry of a vector statistic over the same resamples (one result per
/// entry, in order). bootstrap() is this with a statistic of length 1: the same seed draws the
/// same resamples. Same exceptions, and std::runtime_error if the statistic's length changes.
std::vector<BootstrapResult> bootstrap_each(Eigen::Index n, const RowStatistics& statistics,
                                            int resamples, double level, std::uint64_t seed);

/// Result of a permutation test.
struct PermutationResult {
  double observed = 0.0;  ///< statistic with the rows aligned
  double p_value = 1.0;   ///< (1 + #{T_perm >= T_obs}) / (P + 1)
  int permutations = 0;   ///< P
};

/// Permutation test of independence: the statistic receives a permutation of the rows of the
/// second view (identity for the observed value). Large statistics are evidence against H0.
/// Throws std::invalid_argument unless n >= 2 and P >= 1.
PermutationResult permutation_test(Eigen::Index n, const RowStatistic& statistic, int permutations,
                                   std::uint64_t seed);

/// Result of permutation_test_each().
struct PermutationTestEach {
  Eigen::VectorXd observed;  ///< the statistics with the rows aligned
  /// Per-entry p-values (1 + #{T*_k >= T_k}) / (P + 1): each entry against its own permutation
  /// distribution, no correction for testing several.
  Eigen::VectorXd p_values;
  /// Family-wise adjusted p-values: the step-down max-statistic rule of Westfall & Young (1993,
  /// Algorithm 4.1). With the entries ordered by observed value, T_(1) >= ... >= T_(K), entry
  /// (j)'s count compares T_(j) with max_{l >= j} T*_(l) of each permutation; the adjusted
  /// p-values are then made non-decreasing along that order. Controls the family-wise error
  /// rate under the complete null (subset pivotality).
  Eigen::VectorXd p_values_step_down;
  int permutations = 0;  ///< P
};

/// permutation_test() of a vector statistic: every entry sees the same P permutations of the
/// second view's rows; per-entry and step-down adjusted p-values. permutation_test() is this
/// with a statistic of length 1 (same seed, same permutations, same p-value). Throws
/// std::invalid_argument unless n >= 2 and P >= 1; std::runtime_error if the statistic's length
/// changes or a value is NaN.
PermutationTestEach permutation_test_each(Eigen::Index n, const RowStatistics& statistics,
                                          int permutations, std::uint64_t seed);

}  // namespace moca::kcca
