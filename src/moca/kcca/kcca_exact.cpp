// The exact KCCA solver: the pivoted-Cholesky route (paper regulariser, gamma > 0) and the
// spectral route (eigendecompositions of both Grams), and the reduced SVD they share with the
// low-rank solver (kcca_low_rank.cpp). Dispatched from kcca.cpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/kcca/detail/solvers.hpp"

namespace moca::kcca::detail {

Spectrum truncate(const SymmetricEigen& e, double drop, const char* view, double zero_scale) {
  const double lmax = e.values.size() > 0 ? e.values(0) : 0.0;
  if (!(lmax > zero_scale)) {
    throw_invalid("", std::string("kcca(): the Gram matrix of view ") + view +
                          " is zero (largest eigenvalue " + num(lmax) +
                          "); a constant view has no canonical direction, in particular "
                          "after centring");
  }
  Eigen::Index r = 0;
  while (r < e.values.size() && e.values(r) > drop * lmax) ++r;
  Spectrum s;
  s.U = e.vectors.leftCols(r);
  s.lambda = e.values.head(r);
  return s;
}

// Fixes the sign of each canonical pair so that the largest-magnitude entry of the u variate
// is positive (alpha and beta flip together, keeping alphaᵀ K_u K_m beta >= 0).
void fix_signs(const Eigen::MatrixXd& variates_u, Eigen::MatrixXd& alpha, Eigen::MatrixXd& beta) {
  for (Eigen::Index j = 0; j < alpha.cols(); ++j) {
    Eigen::Index imax = 0;
    variates_u.col(j).cwiseAbs().maxCoeff(&imax);
    if (variates_u(imax, j) < 0) {
      alpha.col(j) *= -1.0;
      beta.col(j) *= -1.0;
    }
  }
}

namespace {

// Spectral filter f (correlation weights) and coefficient scale g (alpha = U diag(g) P).
void filters(const Eigen::VectorXd& l, double gamma, KccaRegularizer reg, Eigen::VectorXd& f,
             Eigen::VectorXd& g) {
  f.resize(l.size());
  g.resize(l.size());
  for (Eigen::Index i = 0; i < l.size(); ++i) {
    if (reg == KccaRegularizer::kPaper) {
      f(i) = std::sqrt(l(i) / (l(i) + gamma));
      g(i) = 1.0 / std::sqrt(l(i) * (l(i) + gamma));
    } else {
      f(i) = l(i) / (l(i) + gamma);
      g(i) = 1.0 / (l(i) + gamma);
    }
  }
}

// SVD of the reduced r_u x r_m matrix. Up to kSvdDirect on the short side: LAPACK's divide and
// conquer SVD. Larger: eigendecomposition of the short side's Gram A Aᵀ (or Aᵀ A) — about 2.5x
// faster — with sigma = sqrt(eigenvalue) and the other side's vectors A ᵀ p / sigma. Squaring
// costs accuracy only for tiny correlations (absolute error ~1e-8 sigma_1 instead of ~1e-16).
constexpr Eigen::Index kSvdDirect = 500;

ThinSvd reduced_svd(const Eigen::MatrixXd& A) {
  const Eigen::Index k = std::min(A.rows(), A.cols());
  if (k <= kSvdDirect) return thin_svd(A, true);
  const bool rows_short = A.rows() <= A.cols();
  const SymmetricEigen e =
      symmetric_eigen(rows_short ? outer_product(A) : transpose_self_product(A));
  ThinSvd out;
  out.values = e.values.cwiseMax(0.0).cwiseSqrt();
  Eigen::MatrixXd other = rows_short ? transpose_product(A, e.vectors) : product(A, e.vectors);
  for (Eigen::Index j = 0; j < k; ++j) {
    const double s = out.values(j);
    if (s > 1e-300) {
      other.col(j) /= s;
    } else {
      other.col(j).setZero();
    }
  }
  if (rows_short) {
    out.u = e.vectors;
    out.v = std::move(other);
  } else {
    out.u = std::move(other);
    out.v = e.vectors;
  }
  return out;
}

// Singular values only (descending), by the same split as reduced_svd.
Eigen::VectorXd singular_values(const Eigen::MatrixXd& A) {
  if (std::min(A.rows(), A.cols()) <= kSvdDirect) return thin_svd(A, false).values;
  const SymmetricEigen e =
      symmetric_eigen(A.rows() <= A.cols() ? outer_product(A) : transpose_self_product(A), false);
  return e.values.cwiseMax(0.0).cwiseSqrt();
}

// Correlations from the reduced matrix when no coefficients are wanted.
void values_only(const Eigen::MatrixXd& A, Eigen::Index n, int components, KccaResult& res) {
  const Eigen::VectorXd s = singular_values(A);
  const Eigen::Index avail = std::min<Eigen::Index>(components, s.size());
  res.correlations = Eigen::VectorXd::Zero(components);
  res.correlations.head(avail) = s.head(avail).cwiseMin(1.0).cwiseMax(0.0);
  res.alpha.resize(n, 0);
  res.beta.resize(n, 0);
}

// rho = sigma(diag f_u U_uᵀ U_m diag f_m), alpha = U_u diag(g_u) P, beta = U_m diag(g_m) Q.
void solve_reduced(const Spectrum& su, const Spectrum& sm, double gu, double gm,
                   KccaRegularizer reg, int components, bool coefficients, KccaResult& res) {
  Eigen::VectorXd fu, gu_s, fm, gm_s;
  filters(su.lambda, gu, reg, fu, gu_s);
  filters(sm.lambda, gm, reg, fm, gm_s);
  Eigen::MatrixXd A = transpose_product(su.U, sm.U);
  A = fu.asDiagonal() * A * fm.asDiagonal();
  const Eigen::Index n = su.U.rows();
  if (!coefficients) {
    values_only(A, n, components, res);
    return;
  }
  const ThinSvd svd = reduced_svd(A);
  const Eigen::Index avail = std::min<Eigen::Index>(components, svd.values.size());
  res.correlations = Eigen::VectorXd::Zero(components);
  res.alpha = Eigen::MatrixXd::Zero(n, components);
  res.beta = Eigen::MatrixXd::Zero(n, components);
  if (avail == 0) return;
  res.correlations.head(avail) = svd.values.head(avail).cwiseMin(1.0).cwiseMax(0.0);
  Eigen::MatrixXd alpha = product(su.U, gu_s.asDiagonal() * svd.u.leftCols(avail));
  Eigen::MatrixXd beta = product(sm.U, gm_s.asDiagonal() * svd.v.leftCols(avail));
  // u variates K_u alpha = U diag(lambda g) P.
  const Eigen::MatrixXd var_u = product(
      su.U, (su.lambda.array() * gu_s.array()).matrix().asDiagonal() * svd.u.leftCols(avail));
  fix_signs(var_u, alpha, beta);
  res.alpha.leftCols(avail) = alpha;
  res.beta.leftCols(avail) = beta;
}

}  // namespace

// The reduced problem from both views' retained spectra; records the ranks and the wall time.
KccaResult solve_spectra(const Spectrum& su, const Spectrum& sm, const KccaOptions& options,
                         KccaResult res, std::chrono::steady_clock::time_point t0) {
  res.rank_u = su.lambda.size();
  res.rank_m = sm.lambda.size();
  solve_reduced(su, sm, res.gamma_u, res.gamma_m, options.regularizer, options.components,
                options.coefficients, res);
  res.seconds = elapsed(t0);
  return res;
}

namespace {

// One view of the pivoted-Cholesky route (paper regulariser, gamma > 0; see kcca.hpp):
// K ~ G Gᵀ, C Cᵀ = GᵀG + gamma I, R = G C^{-T} so that R Rᵀ = K (K + gamma I)^{-1}.
struct ViewFactor {
  Eigen::MatrixXd R;                 // n x r smoother factor
  Eigen::MatrixXd C;                 // r x r lower Cholesky factor of GᵀG + gamma I
  Eigen::MatrixXd L11;               // r x r lower triangular: G's pivot rows, in pivot order
  std::vector<Eigen::Index> pivots;  // the pivot rows
};

// Returns false when GᵀG + gamma I has no numerical Cholesky factor (gamma at rounding level),
// so the caller takes the spectral route.
bool view_factor(const Eigen::MatrixXd& K, double gamma, double drop, const char* view,
                 double zero_scale, ViewFactor& f) {
  // The trace bounds the largest eigenvalue: a Gram with trace at rounding level is zero.
  if (!(K.trace() > zero_scale)) {
    throw_invalid("", std::string("kcca(): the Gram matrix of view ") + view + " is zero (trace " +
                          num(K.trace()) +
                          "); a constant view has no canonical direction, in particular "
                          "after centring");
  }
  const double dmax = K.diagonal().maxCoeff();
  PivotedCholesky pc = pivoted_cholesky(K, drop * dmax);
  const Eigen::Index r = pc.G.cols();
  const double most_negative = pc.residual_diagonal.minCoeff();
  if (most_negative < -1e-8 * dmax) {
    throw_invalid("", std::string("kcca(): K_") + view + " is not positive semi-definite (after " +
                          std::to_string(r) + " Cholesky pivots a residual diagonal entry is " +
                          num(most_negative) + ")");
  }
  Eigen::MatrixXd M = transpose_self_product(pc.G);
  M.diagonal().array() += gamma;
  if (!cholesky_lower(M, f.C)) return false;
  f.L11.resize(r, r);
  for (Eigen::Index i = 0; i < r; ++i) {
    f.L11.row(i) = pc.G.row(pc.pivots[static_cast<size_t>(i)]);
  }
  f.pivots = std::move(pc.pivots);
  f.R = std::move(pc.G);
  solve_right_lower_transpose(f.C, f.R);
  return true;
}

// Dual coefficients whose variate is R P: supported on the pivot rows, alpha_piv = L11^{-T}
// C^{-T} P. Then K alpha = G L11ᵀ alpha_piv = G C^{-T} P = R P exactly (pivoted Cholesky
// reproduces the pivot columns of K), and alphaᵀ (K^2 + gamma K) alpha = PᵀP = 1 per column.
Eigen::MatrixXd pivot_coefficients(const ViewFactor& f, const Eigen::MatrixXd& P, Eigen::Index n) {
  Eigen::MatrixXd X = P;
  solve_left_lower_transpose(f.C, X);
  solve_left_lower_transpose(f.L11, X);
  Eigen::MatrixXd alpha = Eigen::MatrixXd::Zero(n, P.cols());
  for (size_t i = 0; i < f.pivots.size(); ++i) {
    alpha.row(f.pivots[i]) = X.row(static_cast<Eigen::Index>(i));
  }
  return alpha;
}

// The pivoted-Cholesky route of the exact solver; false if a view needs the spectral route.
bool solve_by_factors(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km, double zu, double zm,
                      const KccaOptions& o, KccaResult& res) {
  ViewFactor fu, fm;
  if (!view_factor(Ku, res.gamma_u, o.drop_tolerance, "u", zu, fu)) return false;
  if (!view_factor(Km, res.gamma_m, o.drop_tolerance, "m", zm, fm)) return false;
  res.rank_u = fu.R.cols();
  res.rank_m = fm.R.cols();
  const Eigen::MatrixXd A = transpose_product(fu.R, fm.R);
  const Eigen::Index n = Ku.rows();
  if (!o.coefficients) {
    values_only(A, n, o.components, res);
    return true;
  }
  const ThinSvd svd = reduced_svd(A);
  const Eigen::Index avail = std::min<Eigen::Index>(o.components, svd.values.size());
  res.correlations = Eigen::VectorXd::Zero(o.components);
  res.alpha = Eigen::MatrixXd::Zero(n, o.components);
  res.beta = Eigen::MatrixXd::Zero(n, o.components);
  if (avail == 0) return true;
  res.correlations.head(avail) = svd.values.head(avail).cwiseMin(1.0).cwiseMax(0.0);
  Eigen::MatrixXd alpha = pivot_coefficients(fu, svd.u.leftCols(avail), n);
  Eigen::MatrixXd beta = pivot_coefficients(fm, svd.v.leftCols(avail), n);
  fix_signs(product(fu.R, svd.u.leftCols(avail)), alpha, beta);
  res.alpha.leftCols(avail) = alpha;
  res.beta.leftCols(avail) = beta;
  return true;
}

}  // namespace

KccaResult kcca_exact(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km, double zu, double zm,
                      const KccaOptions& options, KccaResult res,
                      std::chrono::steady_clock::time_point t0) {
  // Paper regulariser with gamma > 0: pivoted Cholesky, no eigendecomposition of the Grams.
  if (options.regularizer == KccaRegularizer::kPaper && res.gamma_u > 0.0 && res.gamma_m > 0.0 &&
      solve_by_factors(Ku, Km, zu, zm, options, res)) {
    res.seconds = elapsed(t0);
    return res;
  }
  // Spectral route (Bach–Jordan, gamma = 0): eigendecompositions of both Grams.
  const Spectrum su = truncate(symmetric_eigen(Ku), options.drop_tolerance, "u", zu);
  return solve_spectra(su, truncate(symmetric_eigen(Km), options.drop_tolerance, "m", zm), options,
                       res, t0);
}

}  // namespace moca::kcca::detail
