#pragma once
/// \file imputation_baselines.hpp
/// Statistical imputation baselines of the paper's generative task (torch-free): linear
/// interpolation, nearest observed neighbour in time, and MICE (multivariate imputation by
/// chained equations). Missing entries come from token masks: sample (c, t) of window i is
/// missing iff masks[i] hides cell (c, t / Lp).
///
/// Channels with no observed sample in a window (sensor task) cannot be interpolated from their
/// own past or future; linear and nearest fill them with the channel's mean over all observed
/// samples of the whole window set (0 if the channel is never observed), and say so in docs.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/mask.hpp"

namespace moca::model {

/// The missing-sample indicator of each window: n x (C*L), 1 = missing, column c*L + t.
/// `masks` holds one mask per window or a single mask shared by all. Throws
/// std::invalid_argument when a mask is not on `grid` or the windows do not fit it.
Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> missing_samples(
    const data::Windows& windows, const std::vector<masking::Mask>& masks,
    const masking::Grid& grid);

/// The samples `masks` leave observed, summed and counted per channel: added over the chunks of
/// a set (in order), the set's observed channel means, bit for bit as over the whole set.
struct ObservedChannels {
  Eigen::VectorXd sum, count;
  void add(const data::Windows& windows, const std::vector<masking::Mask>& masks,
           const masking::Grid& grid);
  /// sum / count per channel; 0 for a channel never observed.
  Eigen::VectorXd means() const;
};

/// Linear interpolation in time, per window and channel, between the nearest observed samples
/// before and after; before the first (after the last) observed sample the first (last)
/// observed value is repeated (numpy.interp's rule). A channel a window hides whole takes
/// `fallback` (one value per channel; default: the observed means of `windows`, as above).
/// Returns n x (C*L) with observed samples copied unchanged.
data::RowMatrixXf impute_linear(const data::Windows& windows,
                                const std::vector<masking::Mask>& masks, const masking::Grid& grid,
                                const Eigen::VectorXd* fallback = nullptr);

/// Nearest observed sample in time, per window and channel; at equal distance the earlier
/// sample wins; `fallback` as impute_linear's. Returns n x (C*L) with observed samples copied
/// unchanged.
data::RowMatrixXf impute_nearest(const data::Windows& windows,
                                 const std::vector<masking::Mask>& masks, const masking::Grid& grid,
                                 const Eigen::VectorXd* fallback = nullptr);

/// Options of MICE (van Buuren & Groothuis-Oudshoorn 2011, method "norm").
struct MiceOptions {
  /// Sweeps over the channels per chain (>= 1; default 10, as scikit-learn's IterativeImputer).
  int iterations = 10;
  /// Independent chains (multiple imputations) averaged into the point estimate (>= 1; default 5,
  /// the conventional m = 5).
  int draws = 5;
  /// Ridge added to the normal equations, relative to their mean diagonal (>= 0; default 1e-6).
  double ridge = 1e-6;
  /// Draw regression coefficients and residual noise from their posterior (Bayesian "norm"
  /// method; default) instead of using the least-squares prediction.
  bool posterior = true;
  std::uint64_t seed = 0;  ///< chain d uses Rng(derive_seed(seed, d))
  /// Throws std::invalid_argument naming the field, value and rule.
  void validate() const;
};

/// MICE over the pooled samples: every time sample of every window is a row, the C channels are
/// the variables. Start: each missing value = the mean of the observed values of its channel.
/// Then `iterations` times, for each channel j in order with missing values: regress channel j on
/// an intercept and the current values of the other channels over the rows where j is observed
/// (ridge-stabilised least squares, beta_hat, residual variance s^2 with n_obs - p degrees of
/// freedom); with `posterior`, draw sigma*^2 = s^2 (n_obs - p) / g, g ~ chi^2(n_obs - p), and
/// beta* ~ N(beta_hat, sigma*^2 (A'A + lambda I)^-1), and impute x_j = a' beta* + sigma* z,
/// z ~ N(0, 1); otherwise x_j = a' beta_hat. The `draws` chains are averaged. Time order is not
/// used (MICE treats samples as exchangeable rows). Returns n x (C*L), observed values copied.
data::RowMatrixXf impute_mice(const data::Windows& windows, const std::vector<masking::Mask>& masks,
                              const masking::Grid& grid, const MiceOptions& options = {});

/// Error of an imputation on the missing entries only.
struct ImputationError {
  double mae = 0.0;  ///< mean |imputed - truth| over missing samples
  double mse = 0.0;  ///< mean (imputed - truth)^2 over missing samples
  long count = 0;    ///< number of missing samples
  /// Unbiased variance (divisor N - 1) of all N = n * C * L values of the windows scored,
  /// missing and observed, every channel pooled: the normaliser of nmse.
  double target_var = 0.0;
  /// Normalised MSE = mse / target_var, unitless: a prediction that is the windows' mean scores
  /// about 1. NaN when target_var is 0 (constant windows; JSON writes null, tables "n/a").
  /// The authors log loss / target.var() per batch instead, with the loss over all patches
  /// (visible ones too) and the variance of that batch (upstream spec section 1, "Loss").
  double nmse = 0.0;
};

/// Unbiased variance of every value of `x` (two passes in double); 0 for fewer than 2 values.
double pooled_variance(const data::RowMatrixXf& x);

/// The pooled moments of values seen a matrix at a time: each matrix in two passes in double, the
/// matrices merged by Chan, Golub and LeVeque's pairwise rule. One matrix gives pooled_variance()
/// exactly; several, the variance of all their values to rounding.
struct PooledMoments {
  double n = 0.0, mean = 0.0, m2 = 0.0;  ///< count, mean, sum of squared deviations
  void add(const data::RowMatrixXf& x);
  /// Unbiased variance (divisor n - 1); 0 for fewer than 2 values.
  double variance() const { return n < 2.0 ? 0.0 : m2 / (n - 1.0); }
};

/// The sums behind ImputationError, which add over sets of windows (chunks of one set).
struct ImputationSums {
  double abs_sum = 0.0;  ///< sum of |imputed - truth| over missing samples
  double sq_sum = 0.0;   ///< sum of (imputed - truth)^2
  long count = 0;        ///< number of missing samples
  ImputationSums& operator+=(const ImputationSums& o) {
    abs_sum += o.abs_sum;
    sq_sum += o.sq_sum;
    count += o.count;
    return *this;
  }
  /// mae and mse from the sums, nmse against `target_var` (NaN when it is 0); all 0 when count
  /// is 0.
  ImputationError error(double target_var) const;
};

/// The sums of imputation_error (same rules and errors).
ImputationSums imputation_sums(const data::Windows& truth, const data::RowMatrixXf& imputed,
                               const std::vector<masking::Mask>& masks, const masking::Grid& grid);

/// Compares `imputed` (n x C*L) with the windows on the entries the masks hide. Throws
/// std::invalid_argument on shape mismatch; count = 0 gives mae = mse = nmse = 0.
ImputationError imputation_error(const data::Windows& truth, const data::RowMatrixXf& imputed,
                                 const std::vector<masking::Mask>& masks,
                                 const masking::Grid& grid);

}  // namespace moca::model
