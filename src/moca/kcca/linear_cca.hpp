#pragma once
/// \file linear_cca.hpp
/// Linear canonical correlation analysis (the paper's simulation: PCA to k dimensions, then
/// sigma_1(Gamma) with Gamma = S_uu^{-1/2} S_um S_mm^{-1/2}).
///
/// Computed without covariance inverses: each centred view X is reduced to an orthonormal basis
/// Q of its column space (thin QR, or the left singular vectors of its PCA) and
/// sigma_i(Gamma) = sigma_i(Q_uᵀ Q_m) (Björck–Golub; R's cancor). With a ridge r the
/// correlations are sigma_i(diag(s_u / sqrt(s_u^2 + r)) V_uᵀ ... ), i.e. those of
/// (X_uᵀX_u + rI)^{-1/2} X_uᵀX_m (X_mᵀX_m + rI)^{-1/2} — equal to linear-kernel KCCA with gamma =
/// r.
#include <Eigen/Core>
#include <string>

namespace moca::kcca {

/// How the PCA step finds the top principal components.
enum class PcaSolver {
  /// Lanczos (Spectra, tolerance 1e-12; dense solver for small problems): the exact top-k
  /// eigenvectors (timings: docs/benchmarks.md).
  kExact,
  /// Randomized block Krylov (Musco & Musco 2015) of depth pca_iterations with a fixed internal
  /// seed: GEMMs only, faster (docs/benchmarks.md); the captured variance is near-optimal but
  /// eigenvectors inside a gap-free noise bulk are approximate. The achieved residual is
  /// reported (LinearCcaResult::pca_residual).
  kRandomized,
};

/// Options of linear_cca().
struct LinearCcaOptions {
  /// Reduce each view to its first `pca` principal components first (the paper uses 50);
  /// 0 (default) = no PCA. >= 0; larger than the view's rank is allowed and keeps the rank.
  int pca = 0;
  /// Ridge r added to both within-view covariances (unnormalised X ᵀX + r I); finite, >= 0.
  /// 0 (default) = plain CCA.
  double ridge = 0.0;
  int components = 1;                        ///< correlations to report; >= 1. Default 1.
  PcaSolver pca_solver = PcaSolver::kExact;  ///< PCA eigensolver. Default exact.
  /// Krylov depth of the randomized PCA solver (blocks after the first); >= 1. Default 4.
  int pca_iterations = 4;
  /// Singular values (or sqrt of PCA eigenvalues) <= rank_tolerance * largest are treated as
  /// zero (zero-variance / collinear columns). In [0, 1). Default 1e-10.
  double rank_tolerance = 1e-10;
  /// Also return the canonical weights (LinearCcaResult::weights_u, weights_m). Default false:
  /// scoring needs the correlations only, and the weights cost an SVD with vectors.
  bool weights = false;
  void validate() const;  ///< throws std::invalid_argument naming field, value and rule
};

/// Result of linear_cca().
struct LinearCcaResult {
  /// sigma_1 >= sigma_2 >= ..., `components` values in [0, 1]; beyond min(p, q) they are 0.
  Eigen::VectorXd correlations;
  /// Null level: the Wachter edge for independent views with these dimensions (docs/kcca.md,
  /// "The mathematics") — what sigma_1 would be by selection bias alone. Report it beside sigma_1.
  double null_level = 0.0;
  /// With PCA: fraction of the view's total variance carried by each kept component (length p).
  /// Without PCA: empty.
  Eigen::VectorXd explained_variance_u;
  Eigen::VectorXd explained_variance_m;  ///< as explained_variance_u for view m (length q)
  /// Non-empty when the result is degenerate: n - 1 <= p + q without ridge makes sigma_1 = 1
  /// trivially; or a view lost dimensions to zero variance / collinearity.
  std::string warning;
  /// PCA only: max over both views and kept components of |A u - theta u| / theta_1 for the
  /// eigenproblem solved (A the Gram or scatter); ~1e-12 for the exact solver, larger for the
  /// randomized one. 0 without PCA.
  double pca_residual = 0.0;
  int n = 0;          ///< samples
  int p = 0;          ///< dimensions of view u used (after PCA, at most its rank)
  int q = 0;          ///< dimensions of view m used
  int columns_u = 0;  ///< input columns of view u
  int columns_m = 0;  ///< input columns of view m
  /// With LinearCcaOptions::weights: canonical weights, d_u x components (columns = pairs, in
  /// the order of `correlations`). The i-th canonical variate of view u is (U - mean(U)) w_i,
  /// normalised as R's cancor: w_iᵀ(U_cᵀU_c + ridge I) w_i = 1 (unit sum of squares without a
  /// ridge); variates of different pairs are uncorrelated, and the variates of pair i of the two
  /// views have correlation correlations(i) (without ridge). Columns beyond the available pairs
  /// are zero. Within the PCA subspace when pca > 0. Empty without the option.
  Eigen::MatrixXd weights_u;
  Eigen::MatrixXd weights_m;  ///< as weights_u for view m (d_m x components)
};

/// Linear CCA of U (n x d_u) and M (n x d_m), rows = samples. Columns are centred; zero-variance
/// columns are allowed (they carry no direction). With PCA the basis comes from the smaller of
/// the n x n Gram X Xᵀ and the d x d scatter XᵀX (symmetric eigensolver, top `pca`), never a
/// full SVD of X. Throws std::invalid_argument for n < 3, a row-count mismatch, non-finite values,
/// a view with no variance at all, or invalid options.
LinearCcaResult linear_cca(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M,
                           const LinearCcaOptions& options);

/// linear_cca() with PCA from the views' centred Grams Gu = Uc Ucᵀ and Gm = Mc Mcᵀ (n x n, Uc =
/// U with its column means removed) instead of the views themselves: the route linear_cca()
/// takes when pca >= 1 and both views have >= n columns, for callers that form the Grams faster
/// than from the features (the policy scorer sums per-token Grams). columns_u, columns_m are the
/// views' widths d_u, d_m (reported, and used for the rank warning). Equal to linear_cca(U, M)
/// up to the rounding of the Grams. Throws std::invalid_argument unless pca >= 1, weights is
/// off, d_u, d_m >= n >= 3, both Grams are finite n x n, or for a view with no variance.
LinearCcaResult linear_cca_from_grams(const Eigen::MatrixXd& Gu, const Eigen::MatrixXd& Gm,
                                      Eigen::Index columns_u, Eigen::Index columns_m,
                                      const LinearCcaOptions& options);

/// Wachter edge sqrt((p/n)(1 - q/n)) + sqrt((q/n)(1 - p/n)): the limit of sigma_1 for
/// independent Gaussian views of dimensions p, q with n samples (p, q < n); 1 when p + q >= n.
/// Throws std::invalid_argument unless p, q >= 1 and n >= 1.
double wachter_edge(int p, int q, int n);

}  // namespace moca::kcca
