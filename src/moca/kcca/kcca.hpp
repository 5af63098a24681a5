#pragma once
/// \file kcca.hpp
/// Regularised kernel canonical correlation analysis (paper, "Connection to Kernel Canonical
/// Correlation Analysis", eq. kcca block).
///
/// Problem: maximise alphaᵀ K_u K_m beta subject to alphaᵀ R_u alpha = betaᵀ R_m beta = 1 with the
/// paper's regulariser R = K^2 + gamma K (default) or the Bach–Jordan R = (K + gamma I)^2.
/// Every solver uses the stable reduction of docs/kcca.md, "The mathematics": rho_i are the
/// singular values of R_uᵀ R_m for any factors with R Rᵀ = S, the view's smoother S = K (K + gamma
/// I)^{-1} (paper) or S = [K (K + gamma I)^{-1}]^2 (Bach–Jordan). With K = U diag(lambda) Uᵀ,
///
///     R = U diag f(lambda),  f(l) = sqrt(l / (l + gamma))  (paper),  l / (l + gamma)  (B–J),
///
/// so every rho lies in [0, 1] and eigenvalues l <= drop_tolerance * l_max are discarded (they
/// only carry rounding noise). The exact solver with the paper's regulariser and gamma > 0 avoids
/// the eigendecompositions of the Grams: a diagonally pivoted Cholesky K ~ G Gᵀ (pivots stop
/// at a remaining diagonal <= drop_tolerance * max K_ii) and the push-through identity
/// K (K + gamma I)^{-1} = G (GᵀG + gamma I)^{-1} Gᵀ give R = G C^{-T} with C Cᵀ = GᵀG + gamma I
/// — two Cholesky factorisations and one triangular solve per view, O(n r^2), then one SVD.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "moca/kcca/kernels.hpp"

namespace moca::kcca {

/// How the canonical correlations are computed.
enum class KccaMethod {
  /// iterative when it is the faster route and applies (n >= 200, components <= n / 10, both
  /// gammas > 0), else exact; an iterative solve that fails (a Gram that is not positive
  /// semi-definite, no convergence) is redone exactly. KccaResult::method names the solver used.
  kAuto,
  kExact,      ///< dense factorisations of both Grams + SVD: all correlations, O(n^3)
  kIterative,  ///< (K + gamma I)^{-1} by Cholesky, then Arnoldi (Spectra) for the top k
  kLowRank,    ///< K ~ G Gᵀ (incomplete Cholesky or Nyström), never forms K: O(n r^2)
};

/// The solvers' names (first of a value: its name; later ones: accepted aliases).
inline constexpr EnumName<KccaMethod> kKccaMethodNames[] = {{KccaMethod::kAuto, "auto"},
                                                            {KccaMethod::kExact, "exact"},
                                                            {KccaMethod::kIterative, "iterative"},
                                                            {KccaMethod::kLowRank, "lowrank"},
                                                            {KccaMethod::kLowRank, "low-rank"}};

/// The regulariser R in alphaᵀ R alpha = 1.
enum class KccaRegularizer {
  kPaper,       ///< R = K^2 + gamma K  (paper; kernlab), filter sqrt(l / (l + gamma))
  kBachJordan,  ///< R = (K + gamma I)^2 (Bach & Jordan 2002 with gamma = n kappa / 2), l/(l+gamma)
};

/// Low-rank factorisation used by KccaMethod::kLowRank.
enum class LowRankMethod {
  kIncompleteCholesky,  ///< pivoted incomplete Cholesky (greedy on the residual diagonal)
  kNystrom,             ///< Nyström with `rank` landmarks drawn uniformly (seeded)
};

/// Outcome of a solver.
enum class SolverStatus {
  kSuccess,        ///< converged / exact
  kNotConverged,   ///< the iterative solver hit max_iterations; values are the last estimates
  kNumericalIssue  ///< the solver reported a numerical problem; values are unreliable
};

std::string to_string(KccaMethod method);
std::string to_string(KccaRegularizer regularizer);  ///< "paper" | "bach-jordan"
std::string to_string(LowRankMethod method);         ///< "icd" | "nystrom"
std::string to_string(SolverStatus status);  ///< "success" | "not-converged" | "numerical-issue"

/// Options of kcca() and kcca_low_rank().
struct KccaOptions {
  /// Regularisation of view u (paper's gamma_U); finite, >= 0. gamma = 0 is the unregularised
  /// problem, degenerate for any invertible K (every rho = 1, docs/kcca.md); the iterative
  /// and low-rank solvers need gamma > 0. Default 0.1.
  double gamma_u = 0.1;
  double gamma_m = 0.1;  ///< regularisation of view m; as gamma_u.
  /// Per-sample regularisation epsilon (Fukumizu, Bach & Gretton 2007): when > 0 it replaces
  /// gamma by n * epsilon (consistency needs epsilon -> 0 no faster than n^{-1/3}). Default 0
  /// (use gamma_u); finite, >= 0.
  double epsilon_u = 0.0;
  double epsilon_m = 0.0;  ///< per-sample regularisation of view m; as epsilon_u.
  /// Centre both kernels in feature space (K -> H K H). Uncentred correlations include the mean
  /// component and are larger (docs/kcca.md). Default true.
  bool center = true;
  int components = 1;  ///< number of canonical pairs; 1 <= components <= n. Default 1.
  KccaMethod method = KccaMethod::kAuto;                        ///< solver. Default auto.
  KccaRegularizer regularizer = KccaRegularizer::kPaper;        ///< Default paper (K^2 + gamma K).
  LowRankMethod low_rank = LowRankMethod::kIncompleteCholesky;  ///< low-rank factorisation.
  int rank = 300;  ///< maximal rank of the low-rank factors; >= 1. Default 300.
  /// Iterative: Spectra's relative tolerance (default 1e-10). Low-rank (incomplete Cholesky):
  /// stop early when the residual trace <= tolerance * trace(K). Finite, > 0.
  double tolerance = 1e-10;
  int max_iterations = 1000;  ///< iterative: Arnoldi restarts; >= 1. Default 1000.
  /// Eigenvalues l <= drop_tolerance * l_max of a Gram are treated as 0 (pivoted-Cholesky route:
  /// pivots stop at a remaining diagonal <= drop_tolerance * max K_ii); in [0, 1). Default 1e-12.
  double drop_tolerance = 1e-12;
  /// Compute the coefficients alpha, beta (exact and low-rank solvers). false skips the singular
  /// vectors and every n x components product (the faster route when only correlations are
  /// wanted; docs/benchmarks.md) and leaves alpha, beta n x 0. The iterative solver always computes
  /// them. Default true.
  bool coefficients = true;
  std::uint64_t seed = 0;  ///< seed for Nyström landmarks. Default 0.

  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
  /// The gamma actually used for n samples: n * epsilon_u if epsilon_u > 0, else gamma_u.
  double effective_gamma_u(Eigen::Index n) const;
  double effective_gamma_m(Eigen::Index n) const;  ///< as effective_gamma_u for view m.
};

/// Result of a KCCA solve.
struct KccaResult {
  /// Canonical correlations rho_1 >= rho_2 >= ... in [0, 1], `components` of them. Beyond the
  /// numerical rank of either Gram the correlations are exactly 0 (and their alpha/beta columns
  /// 0): no direction of that view is left.
  Eigen::VectorXd correlations;
  /// n x components dual coefficients of view u: the canonical variate is K_u alpha_i, scaled so
  /// alpha_iᵀ R_u alpha_i = 1 (R the regulariser, on the centred Gram when centred). Sign fixed
  /// so that the largest-magnitude entry of K_u alpha_i is positive. n x 0 when
  /// options.coefficients is false (exact and low-rank solvers).
  Eigen::MatrixXd alpha;
  Eigen::MatrixXd beta;  ///< n x components dual coefficients of view m; as alpha.
  SolverStatus status = SolverStatus::kSuccess;  ///< solver outcome
  int iterations = 0;    ///< Arnoldi restarts (iterative), pivots taken (low rank), else 0
  bool centered = true;  ///< whether the Grams were centred
  double gamma_u = 0.0;  ///< regularisation used for view u (after epsilon)
  double gamma_m = 0.0;  ///< regularisation used for view m
  Eigen::Index n = 0;    ///< samples
  /// numerical rank of (centred) K_u kept by the solver; 0 after the iterative solver, which
  /// does not compute it
  Eigen::Index rank_u = 0;
  Eigen::Index rank_m = 0;  ///< numerical rank of (centred) K_m kept by the solver
  /// Low rank: bound on |rho_i^2 - rho~_i^2| from the factorisation error (docs/kcca.md):
  /// c (tr(K_u - G_u G_uᵀ) / gamma_u + tr(K_m - G_m G_mᵀ) / gamma_m), c = 1 for the paper's
  /// regulariser and 2 for Bach–Jordan; the trace bounds the spectral norm of the PSD residual
  /// and centring does not increase it. Hence |rho_i - rho~_i| <= sqrt(bound). 0 for exact and
  /// iterative solves.
  double approximation_bound = 0.0;
  double residual_trace_u = 0.0;                          ///< low rank: tr(K_u - G_u G_uᵀ)
  double residual_trace_m = 0.0;                          ///< low rank: tr(K_m - G_m G_mᵀ)
  KccaMethod method = KccaMethod::kExact;                 ///< solver used (never kAuto)
  KccaRegularizer regularizer = KccaRegularizer::kPaper;  ///< regulariser used
  double seconds = 0.0;  ///< wall time of the solve (excluding the caller's Gram construction)
  /// Human-readable detail of a non-success status, or why kAuto's iterative attempt was redone
  /// by the exact solver; else empty.
  std::string message;
};

/// Bytes of the n x n matrices of doubles that the exact and iterative solvers hold at their
/// peak for n samples: the caller's two Grams plus the symmetrised, centred copies and the
/// factorisation's work space (6 n^2 doubles).
double dense_kcca_bytes(Eigen::Index n);

/// Refuses n x n work that does not fit: throws std::runtime_error (e.g. "exact KCCA at n =
/// 60000 needs ~173 GB for the two n x n Grams and the solver's copies; this machine has 24 GB
/// available; use --method lowrank --rank R (or fewer samples)") when dense_kcca_bytes(n)
/// exceeds MemAvailable of /proc/meminfo. Call it before building the Grams; kcca() calls it too.
/// \param alternative what the user can do instead, for the message.
void check_dense_kcca_memory(Eigen::Index n, KccaMethod method,
                             const std::string& alternative =
                                 "use --method lowrank --rank R (memory O(n R)) or fewer "
                                 "samples");

/// Regularised KCCA of two n x n Gram matrices (symmetric PSD; symmetry is checked to 1e-8
/// relative). Methods kExact and kIterative; kLowRank needs the data (see kcca_low_rank) and is
/// rejected here. The exact and iterative solvers agree to ~1e-8 on the top correlations.
/// Throws std::invalid_argument for bad options or Grams (size mismatch, not square, not
/// symmetric, non-finite, fewer than 2 samples, a Gram that is 0 — e.g. a constant view after
/// centring — or components > n); std::runtime_error if a dense factorisation fails or the
/// solver's n x n work would not fit in memory (check_dense_kcca_memory).
KccaResult kcca(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km, const KccaOptions& options);

/// As kcca() above, for Grams the caller no longer needs: they are symmetrised, centred and
/// factorised in place (left in a valid but unspecified state), which saves two n x n copies and
/// their page faults. Same checks, same results.
KccaResult kcca(Eigen::MatrixXd&& Ku, Eigen::MatrixXd&& Km, const KccaOptions& options);

/// A low-rank factor K ~ G Gᵀ of a Gram matrix.
struct LowRankFactor {
  Eigen::MatrixXd G;                 ///< n x r
  std::vector<Eigen::Index> pivots;  ///< rows used (ICD pivots or Nyström landmarks)
  double residual_trace = 0.0;       ///< tr(K - G Gᵀ) >= ||K - G Gᵀ||_2 (residual is PSD)
  double trace = 0.0;                ///< tr(K)
};

/// Pivoted incomplete Cholesky of the Gram of X's rows: greedily picks the row with the largest
/// residual diagonal until rank `max_rank` or residual trace <= tolerance * tr(K). O(n r^2 + n r d)
/// time, O(n r) memory; K is never formed.
LowRankFactor incomplete_cholesky(const Eigen::MatrixXd& X, const Kernel& kernel, int max_rank,
                                  double tolerance);

/// Nyström factor G = C W^{+1/2} with C = K(X, L), W = K(L, L) for `rank` landmark rows L drawn
/// uniformly without replacement (seeded); eigenvalues of W below 1e-12 max are dropped.
LowRankFactor nystrom(const Eigen::MatrixXd& X, const Kernel& kernel, int rank, std::uint64_t seed);

/// KCCA from low-rank factors K_u ~ G_u G_uᵀ, K_m ~ G_m G_mᵀ (centred by centring the factor
/// columns). O(n r^2). approximation_bound is left 0 (the caller knows the factor error).
KccaResult kcca_from_factors(const Eigen::MatrixXd& Gu, const Eigen::MatrixXd& Gm,
                             const KccaOptions& options);

/// Low-rank KCCA of data U (n x d_u) and M (n x d_m) with kernels ku, km: factors by
/// options.low_rank at options.rank, then kcca_from_factors; reports the perturbation bound
/// (KccaResult::approximation_bound). Never forms an n x n matrix. options.method is ignored
/// (the result says kLowRank).
KccaResult kcca_low_rank(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, const Kernel& ku,
                         const Kernel& km, const KccaOptions& options);

}  // namespace moca::kcca
