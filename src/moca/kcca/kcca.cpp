#include "moca/kcca/kcca.hpp"

#include <Spectra/GenEigsSolver.h>
#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "moca/common/memory.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca {

namespace {

std::string num(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The retained spectrum of one view: K ~ U diag(lambda) Uᵀ with lambda > drop * lambda_max.
struct Spectrum {
  Eigen::MatrixXd U;
  Eigen::VectorXd lambda;
};

Spectrum truncate(const SymmetricEigen& e, double drop, const char* view, double zero_scale) {
  const double lmax = e.values.size() > 0 ? e.values(0) : 0.0;
  if (!(lmax > zero_scale)) {
    throw std::invalid_argument(std::string("kcca(): the Gram matrix of view ") + view +
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
    throw std::invalid_argument(std::string("kcca(): the Gram matrix of view ") + view +
                                " is zero (trace " + num(K.trace()) +
                                "); a constant view has no canonical direction, in particular "
                                "after centring");
  }
  const double dmax = K.diagonal().maxCoeff();
  PivotedCholesky pc = pivoted_cholesky(K, drop * dmax);
  const Eigen::Index r = pc.G.cols();
  const double most_negative = pc.residual_diagonal.minCoeff();
  if (most_negative < -1e-8 * dmax) {
    throw std::invalid_argument(std::string("kcca(): K_") + view +
                                " is not positive semi-definite (after " + std::to_string(r) +
                                " Cholesky pivots a residual diagonal entry is " +
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

// Visits the pairs (K(i, j), K(j, i)), i >= j, in square tiles so that both the column and the
// transposed row stay in cache (no n x n temporary).
template <typename F>
void for_each_symmetric_pair(Eigen::Index n, F&& f) {
  constexpr Eigen::Index kTile = 64;
  for (Eigen::Index jb = 0; jb < n; jb += kTile) {
    const Eigen::Index je = std::min(n, jb + kTile);
    for (Eigen::Index ib = jb; ib < n; ib += kTile) {
      const Eigen::Index ie = std::min(n, ib + kTile);
      for (Eigen::Index j = jb; j < je; ++j) {
        for (Eigen::Index i = std::max(ib, j); i < ie; ++i) f(i, j);
      }
    }
  }
}

// Checks that K is square, finite and symmetric to 1e-8 relative; returns max |K_ij|.
double check_gram(const Eigen::MatrixXd& K, const char* view) {
  if (K.rows() != K.cols()) {
    throw std::invalid_argument(std::string("kcca(): K_") + view + " is " +
                                std::to_string(K.rows()) + " x " + std::to_string(K.cols()) +
                                " (must be square)");
  }
  if (!K.allFinite()) {
    throw std::invalid_argument(std::string("kcca(): K_") + view + " contains NaN or Inf");
  }
  double scale = 0.0, asym = 0.0;
  for_each_symmetric_pair(K.rows(), [&](Eigen::Index i, Eigen::Index j) {
    const double a = K(i, j), b = K(j, i);
    scale = std::max(scale, std::max(std::abs(a), std::abs(b)));
    asym = std::max(asym, std::abs(a - b));
  });
  if (asym > 1e-8 * std::max(scale, 1e-300)) {
    throw std::invalid_argument(std::string("kcca(): K_") + view +
                                " is not symmetric (max |K - Kᵀ| = " + num(asym) + ")");
  }
  return scale;
}

// K <- (K + Kᵀ) / 2, then centred (H K H, H = I - 11ᵀ/n) when `center`; exactly symmetric.
void symmetrize_in_place(Eigen::MatrixXd& S, bool center) {
  const Eigen::Index n = S.rows();
  for_each_symmetric_pair(n, [&](Eigen::Index i, Eigen::Index j) {
    const double v = 0.5 * (S(i, j) + S(j, i));
    S(i, j) = v;
    S(j, i) = v;
  });
  if (!center) return;
  // Row means equal column means for the symmetric S.
  const Eigen::VectorXd m = S.colwise().mean().transpose();
  const double g = m.mean();
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) S(i, j) -= (m(i) + m(j)) - g;
  }
}

// The Spectra operator x -> S_u S_m x with S = K (K + gamma I)^{-1} = I - gamma (K + gamma I)^{-1}
// (paper) or S = [K (K + gamma I)^{-1}]^2 (Bach–Jordan), from the Cholesky factors of
// K + gamma I: two (four) pairs of BLAS triangular solves per application. (Explicit inverses
// would halve the application's memory traffic but cost two more factorisation-sized steps,
// dpotri: 0.25 s against ~0.06 s of extra solves at n = 2000, see docs/benchmarks.md.)
class ProductOp {
 public:
  using Scalar = double;
  ProductOp(const Eigen::MatrixXd& lu, const Eigen::MatrixXd& lm, double gu, double gm,
            KccaRegularizer reg)
      : lu_(lu), lm_(lm), gu_(gu), gm_(gm), reg_(reg), buf_(lu.rows()), tmp_(lu.rows()) {}
  Eigen::Index rows() const { return lu_.rows(); }
  Eigen::Index cols() const { return lu_.rows(); }
  void perform_op(const double* x_in, double* y_out) const {
    Eigen::Map<const Eigen::VectorXd> x(x_in, rows());
    Eigen::Map<Eigen::VectorXd> y(y_out, rows());
    buf_ = x;
    const int reps = reg_ == KccaRegularizer::kPaper ? 1 : 2;
    for (int r = 0; r < reps; ++r) apply_s(lm_, gm_);
    for (int r = 0; r < reps; ++r) apply_s(lu_, gu_);
    y = buf_;
  }

 private:
  // buf <- buf - gamma (K + gamma I)^{-1} buf (no allocation).
  void apply_s(const Eigen::MatrixXd& L, double gamma) const {
    tmp_ = buf_;
    cholesky_solve_in_place(L, tmp_);
    buf_ -= gamma * tmp_;
  }
  const Eigen::MatrixXd& lu_;  // Cholesky factors of K + gamma I (lower triangles)
  const Eigen::MatrixXd& lm_;
  double gu_, gm_;
  KccaRegularizer reg_;
  mutable Eigen::VectorXd buf_, tmp_;
};

// Normalises alpha (columns) so that alphaᵀ R alpha = 1 given K alpha and (K + gamma I) alpha.
double regulariser_norm(const Eigen::VectorXd& Ka, const Eigen::VectorXd& a, double gamma,
                        KccaRegularizer reg) {
  if (reg == KccaRegularizer::kPaper) return std::sqrt(Ka.squaredNorm() + gamma * a.dot(Ka));
  return (Ka + gamma * a).norm();
}

// Iterative solver on the prepared (symmetric, centred) Grams, which it overwrites with the
// Cholesky factors of K + gamma I: no further n x n buffer. K itself is not needed afterwards
// because K (K + gamma I)^{-1} v = v - gamma (K + gamma I)^{-1} v.
KccaResult kcca_iterative(Eigen::MatrixXd& lu, Eigen::MatrixXd& lm, double gu, double gm,
                          const KccaOptions& o, KccaResult res) {
  const Eigen::Index n = lu.rows();
  const int k = o.components;
  if (!(gu > 0.0 && gm > 0.0)) {
    throw std::invalid_argument("kcca(): the iterative solver needs gamma_u, gamma_m > 0 (got " +
                                num(gu) + ", " + num(gm) + ")");
  }
  if (k > n - 3) {
    throw std::invalid_argument("kcca(): components (" + std::to_string(k) +
                                ") must be <= n - 3 (" + std::to_string(n - 3) +
                                ") for the iterative solver; use method exact");
  }
  lu.diagonal().array() += gu;
  const bool ok_u = cholesky_lower_in_place(lu);
  bool ok_m = false;
  if (ok_u) {
    lm.diagonal().array() += gm;
    ok_m = cholesky_lower_in_place(lm);
  }
  if (!ok_u || !ok_m) {
    throw std::invalid_argument("kcca(): K + gamma I is not positive definite for view " +
                                std::string(!ok_u ? "u" : "m") +
                                " (the Gram matrix is not positive semi-definite)");
  }
  // w = (K + gamma I)^{-1} v and Kw = K w = v - gamma w.
  auto smooth = [](const Eigen::MatrixXd& L, double gamma, const Eigen::VectorXd& v,
                   Eigen::VectorXd& w, Eigen::VectorXd& Kw) {
    w = v;
    cholesky_solve_in_place(L, w);
    Kw = v - gamma * w;
  };
  ProductOp op(lu, lm, gu, gm, o.regularizer);
  const Eigen::Index ncv = std::min<Eigen::Index>(n, std::max<Eigen::Index>(2 * k + 1, 20));
  Spectra::GenEigsSolver<ProductOp> eigs(op, k, ncv);
  eigs.init();
  eigs.compute(Spectra::SortRule::LargestReal, o.max_iterations, o.tolerance,
               Spectra::SortRule::LargestReal);
  res.iterations = static_cast<int>(eigs.num_iterations());
  switch (eigs.info()) {
    case Spectra::CompInfo::Successful:
      res.status = SolverStatus::kSuccess;
      break;
    case Spectra::CompInfo::NotConverging:
      res.status = SolverStatus::kNotConverged;
      res.message = "Arnoldi did not converge in " + std::to_string(o.max_iterations) +
                    " restarts (tolerance " + num(o.tolerance) + ")";
      break;
    default:
      res.status = SolverStatus::kNumericalIssue;
      res.message = "Spectra reported a numerical issue";
      break;
  }
  res.correlations = Eigen::VectorXd::Zero(k);
  res.alpha = Eigen::MatrixXd::Zero(n, k);
  res.beta = Eigen::MatrixXd::Zero(n, k);
  if (res.status == SolverStatus::kNumericalIssue) return res;
  Eigen::MatrixXd var_u = Eigen::MatrixXd::Zero(n, k);  // K_u alpha
  const Eigen::VectorXcd vals = eigs.eigenvalues();
  const Eigen::MatrixXcd vecs = eigs.eigenvectors();
  const Eigen::Index got = std::min<Eigen::Index>(k, vals.size());
  double max_imag = 0.0;
  const bool bj = o.regularizer == KccaRegularizer::kBachJordan;
  for (Eigen::Index j = 0; j < got; ++j) {
    max_imag = std::max(max_imag, std::abs(vals(j).imag()));
    const double r2 = std::min(1.0, std::max(0.0, vals(j).real()));
    res.correlations(j) = std::sqrt(r2);
    if (r2 <= 0.0) continue;
    // beta from the stationary equations (see kcca.hpp), then alpha from beta: paper
    // beta = W_m a, alpha = W_u K_m beta; Bach–Jordan one more W K on each side.
    Eigen::VectorXd beta, Kb, alpha, Ka;
    smooth(lm, gm, vecs.col(j).real(), beta, Kb);
    if (bj) smooth(lm, gm, Kb, beta, Kb);
    smooth(lu, gu, Kb, alpha, Ka);
    if (bj) smooth(lu, gu, Ka, alpha, Ka);
    const double na = regulariser_norm(Ka, alpha, gu, o.regularizer);
    const double nb = regulariser_norm(Kb, beta, gm, o.regularizer);
    if (!(na > 0.0 && nb > 0.0)) continue;
    res.alpha.col(j) = alpha / na;
    res.beta.col(j) = beta / nb;
    var_u.col(j) = Ka / na;
  }
  if (max_imag > 1e-8 && res.status == SolverStatus::kSuccess) {
    res.status = SolverStatus::kNumericalIssue;
    res.message = "complex eigenvalues (|imag| " + num(max_imag) + ") in the product operator";
  }
  // Descending order (Spectra sorts by real part already; keep it explicit).
  std::vector<Eigen::Index> order(static_cast<size_t>(k));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index x, Eigen::Index y) {
    return res.correlations(x) > res.correlations(y);
  });
  KccaResult sorted = res;
  Eigen::MatrixXd sorted_var(n, k);
  for (Eigen::Index j = 0; j < k; ++j) {
    const Eigen::Index s = order[static_cast<size_t>(j)];
    sorted.correlations(j) = res.correlations(s);
    sorted.alpha.col(j) = res.alpha.col(s);
    sorted.beta.col(j) = res.beta.col(s);
    sorted_var.col(j) = var_u.col(s);
  }
  fix_signs(sorted_var, sorted.alpha, sorted.beta);
  return sorted;
}

// Shared input checks of both kcca() overloads; returns max |K_u|, max |K_m|.
std::pair<double, double> check_inputs(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km,
                                       const KccaOptions& options) {
  options.validate();
  const double scale_u = check_gram(Ku, "u");
  const double scale_m = check_gram(Km, "m");
  if (Ku.rows() != Km.rows()) {
    throw std::invalid_argument("kcca(): K_u is " + std::to_string(Ku.rows()) + " x " +
                                std::to_string(Ku.rows()) + ", K_m is " +
                                std::to_string(Km.rows()) + " x " + std::to_string(Km.rows()) +
                                " (sample counts must match)");
  }
  const Eigen::Index n = Ku.rows();
  if (n < 2) {
    throw std::invalid_argument("kcca(): n (" + std::to_string(n) + ") must be >= 2");
  }
  if (options.components > n) {
    throw std::invalid_argument("kcca(): components (" + std::to_string(options.components) +
                                ") must be <= n (" + std::to_string(n) + ")");
  }
  if (options.method == KccaMethod::kLowRank) {
    throw std::invalid_argument(
        "kcca(): method lowrank needs the data, not Gram matrices; call kcca_low_rank()");
  }
  check_dense_kcca_memory(n, options.method);
  return {scale_u, scale_m};
}

// Both overloads after check_inputs: Ku, Km are the caller's Grams (copies or moved-in),
// overwritten here.
KccaResult kcca_checked(Eigen::MatrixXd& Ku, Eigen::MatrixXd& Km, double scale_u, double scale_m,
                        const KccaOptions& options, std::chrono::steady_clock::time_point t0) {
  const Eigen::Index n = Ku.rows();
  KccaResult res;
  res.n = n;
  res.centered = options.center;
  res.method = options.method;
  res.regularizer = options.regularizer;
  res.gamma_u = options.effective_gamma_u(n);
  res.gamma_m = options.effective_gamma_m(n);
  symmetrize_in_place(Ku, options.center);
  symmetrize_in_place(Km, options.center);
  // A Gram whose largest eigenvalue is at rounding level of its entries is zero.
  const double zu = 1e-12 * static_cast<double>(n) * scale_u;
  const double zm = 1e-12 * static_cast<double>(n) * scale_m;
  if (options.method == KccaMethod::kIterative) {
    // Zero-Gram check without a decomposition: the trace bounds the largest eigenvalue.
    if (!(Ku.trace() > zu) || !(Km.trace() > zm)) {
      throw std::invalid_argument(std::string("kcca(): the Gram matrix of view ") +
                                  (Ku.trace() > zu ? "m" : "u") +
                                  " is zero; a constant view has no canonical direction, in "
                                  "particular after centring");
    }
    res = kcca_iterative(Ku, Km, res.gamma_u, res.gamma_m, options, res);
    res.seconds = elapsed(t0);
    return res;
  }
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

}  // namespace

KccaMethod parse_kcca_method(const std::string& name) {
  if (name == "exact") return KccaMethod::kExact;
  if (name == "iterative") return KccaMethod::kIterative;
  if (name == "lowrank" || name == "low-rank") return KccaMethod::kLowRank;
  throw std::invalid_argument("parse_kcca_method(): method (" + name +
                              ") is not one of exact, iterative, lowrank");
}

std::string to_string(KccaMethod method) {
  switch (method) {
    case KccaMethod::kExact:
      return "exact";
    case KccaMethod::kIterative:
      return "iterative";
    case KccaMethod::kLowRank:
      return "lowrank";
  }
  return "unknown";
}

std::string to_string(KccaRegularizer regularizer) {
  return regularizer == KccaRegularizer::kPaper ? "paper" : "bach-jordan";
}

std::string to_string(LowRankMethod method) {
  return method == LowRankMethod::kIncompleteCholesky ? "icd" : "nystrom";
}

std::string to_string(SolverStatus status) {
  switch (status) {
    case SolverStatus::kSuccess:
      return "success";
    case SolverStatus::kNotConverged:
      return "not-converged";
    case SolverStatus::kNumericalIssue:
      return "numerical-issue";
  }
  return "unknown";
}

void KccaOptions::validate() const {
  auto nonneg = [](double v, const char* name) {
    if (!(std::isfinite(v) && v >= 0.0)) {
      throw std::invalid_argument(std::string("KccaOptions::validate(): ") + name + " (" + num(v) +
                                  ") must be finite and >= 0");
    }
  };
  nonneg(gamma_u, "gamma_u");
  nonneg(gamma_m, "gamma_m");
  nonneg(epsilon_u, "epsilon_u");
  nonneg(epsilon_m, "epsilon_m");
  if (components < 1) {
    throw std::invalid_argument("KccaOptions::validate(): components (" +
                                std::to_string(components) + ") must be >= 1");
  }
  if (rank < 1) {
    throw std::invalid_argument("KccaOptions::validate(): rank (" + std::to_string(rank) +
                                ") must be >= 1");
  }
  if (!(std::isfinite(tolerance) && tolerance > 0.0)) {
    throw std::invalid_argument("KccaOptions::validate(): tolerance (" + num(tolerance) +
                                ") must be finite and > 0");
  }
  if (max_iterations < 1) {
    throw std::invalid_argument("KccaOptions::validate(): max_iterations (" +
                                std::to_string(max_iterations) + ") must be >= 1");
  }
  if (!(drop_tolerance >= 0.0 && drop_tolerance < 1.0)) {
    throw std::invalid_argument("KccaOptions::validate(): drop_tolerance (" + num(drop_tolerance) +
                                ") must be in [0, 1)");
  }
}

double KccaOptions::effective_gamma_u(Eigen::Index n) const {
  return epsilon_u > 0.0 ? static_cast<double>(n) * epsilon_u : gamma_u;
}
double KccaOptions::effective_gamma_m(Eigen::Index n) const {
  return epsilon_m > 0.0 ? static_cast<double>(n) * epsilon_m : gamma_m;
}

double dense_kcca_bytes(Eigen::Index n) {
  return 6.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(double);
}

void check_dense_kcca_memory(Eigen::Index n, KccaMethod method, const std::string& alternative) {
  require_memory(dense_kcca_bytes(n),
                 to_string(method) + " KCCA at n = " + std::to_string(n) +
                     " (two n x n Grams and the solver's n x n copies)",
                 alternative);
}

KccaResult kcca(const Eigen::MatrixXd& Ku_in, const Eigen::MatrixXd& Km_in,
                const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [scale_u, scale_m] = check_inputs(Ku_in, Km_in, options);
  Eigen::MatrixXd Ku = Ku_in, Km = Km_in;
  return kcca_checked(Ku, Km, scale_u, scale_m, options, t0);
}

KccaResult kcca(Eigen::MatrixXd&& Ku, Eigen::MatrixXd&& Km, const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [scale_u, scale_m] = check_inputs(Ku, Km, options);
  Eigen::MatrixXd u = std::move(Ku), m = std::move(Km);
  return kcca_checked(u, m, scale_u, scale_m, options, t0);
}

// ---------------------------------------------------------------------------------------------
// Low rank.

namespace {

// k(X, x_p) for all rows of X, given the squared row norms of X.
void kernel_column(const Eigen::MatrixXd& X, const Eigen::VectorXd& norms, Eigen::Index p,
                   const Kernel& k, Eigen::VectorXd& out) {
  const Eigen::VectorXd xp = X.row(p).transpose();
  out.noalias() = X * xp;
  const Eigen::Index n = X.rows();
  const double np = norms(p);
  switch (k.type) {
    case KernelType::kLinear:
      return;
    case KernelType::kPolynomial:
      for (Eigen::Index i = 0; i < n; ++i) out(i) = std::pow(out(i) + k.coef0, k.degree);
      return;
    case KernelType::kGaussian: {
      const double s = 1.0 / (2.0 * k.sigma * k.sigma);
      for (Eigen::Index i = 0; i < n; ++i) {
        out(i) = std::exp(-std::max(0.0, norms(i) + np - 2.0 * out(i)) * s);
      }
      out(p) = 1.0;
      return;
    }
    case KernelType::kLaplacian: {
      const double s = 1.0 / k.sigma;
      for (Eigen::Index i = 0; i < n; ++i) {
        out(i) = std::exp(-std::sqrt(std::max(0.0, norms(i) + np - 2.0 * out(i))) * s);
      }
      out(p) = 1.0;
      return;
    }
  }
}

void check_data(const Eigen::MatrixXd& X, const char* fn) {
  if (X.rows() < 2 || X.cols() < 1) {
    throw std::invalid_argument(std::string(fn) + ": data is " + std::to_string(X.rows()) + " x " +
                                std::to_string(X.cols()) + " (need >= 2 rows and >= 1 column)");
  }
  if (!X.allFinite()) throw std::invalid_argument(std::string(fn) + ": data contains NaN or Inf");
}

// Retained spectrum of G Gᵀ from the r x r matrix Gᵀ G: U = G V diag(1/s).
Spectrum factor_spectrum(const Eigen::MatrixXd& G, double drop, const char* view) {
  const SymmetricEigen e = symmetric_eigen(transpose_self_product(G));
  const double scale = G.size() > 0 ? G.cwiseAbs().maxCoeff() : 0.0;
  const Spectrum s0 =
      truncate(e, drop, view, 1e-12 * static_cast<double>(G.rows()) * scale * scale);
  Spectrum s;
  s.lambda = s0.lambda;
  s.U = product(G, s0.U);
  for (Eigen::Index j = 0; j < s.U.cols(); ++j) s.U.col(j) /= std::sqrt(s.lambda(j));
  return s;
}

}  // namespace

LowRankFactor incomplete_cholesky(const Eigen::MatrixXd& X, const Kernel& kernel, int max_rank,
                                  double tolerance) {
  kernel.validate();
  check_data(X, "incomplete_cholesky()");
  if (max_rank < 1) {
    throw std::invalid_argument("incomplete_cholesky(): max_rank (" + std::to_string(max_rank) +
                                ") must be >= 1");
  }
  if (!(tolerance >= 0.0 && std::isfinite(tolerance))) {
    throw std::invalid_argument("incomplete_cholesky(): tolerance (" + num(tolerance) +
                                ") must be finite and >= 0");
  }
  const Eigen::Index n = X.rows();
  const Eigen::Index R = std::min<Eigen::Index>(max_rank, n);
  const Eigen::VectorXd norms = X.rowwise().squaredNorm();
  Eigen::VectorXd d(n);
  for (Eigen::Index i = 0; i < n; ++i) d(i) = kernel.diagonal(norms(i));
  LowRankFactor f;
  f.trace = d.sum();
  Eigen::MatrixXd G(n, R);
  Eigen::VectorXd col(n);
  Eigen::Index j = 0;
  for (; j < R; ++j) {
    Eigen::Index p = 0;
    const double dp = d.maxCoeff(&p);
    if (!(dp > 0.0) || d.sum() <= tolerance * f.trace) break;
    kernel_column(X, norms, p, kernel, col);
    const double piv = std::sqrt(dp);
    if (j > 0) {
      const Eigen::VectorXd gp = G.row(p).head(j).transpose();
      // col -= G[:, :j] gp, in parallel row blocks (memory-bound GEMV).
#pragma omp parallel for schedule(static)
      for (Eigen::Index b = 0; b < n; b += 4096) {
        const Eigen::Index len = std::min<Eigen::Index>(4096, n - b);
        col.segment(b, len).noalias() -= G.block(b, 0, len, j) * gp;
      }
    }
    G.col(j) = col / piv;
    G(p, j) = piv;
    d -= G.col(j).cwiseAbs2();
    d(p) = 0.0;
    d = d.cwiseMax(0.0);
    f.pivots.push_back(p);
  }
  f.G = G.leftCols(j);
  f.residual_trace = std::max(0.0, d.sum());
  return f;
}

LowRankFactor nystrom(const Eigen::MatrixXd& X, const Kernel& kernel, int rank,
                      std::uint64_t seed) {
  kernel.validate();
  check_data(X, "nystrom()");
  if (rank < 1) {
    throw std::invalid_argument("nystrom(): rank (" + std::to_string(rank) + ") must be >= 1");
  }
  const Eigen::Index n = X.rows();
  const Eigen::Index r = std::min<Eigen::Index>(rank, n);
  std::vector<Eigen::Index> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), Eigen::Index{0});
  Rng rng(seed);
  // Partial Fisher–Yates: the first r entries are a uniform sample without replacement.
  for (Eigen::Index i = 0; i < r; ++i) {
    const auto j = static_cast<size_t>(uniform_int(rng, i, n - 1));
    std::swap(idx[static_cast<size_t>(i)], idx[j]);
  }
  idx.resize(static_cast<size_t>(r));
  std::sort(idx.begin(), idx.end());
  Eigen::MatrixXd L(r, X.cols());
  for (Eigen::Index i = 0; i < r; ++i) L.row(i) = X.row(idx[static_cast<size_t>(i)]);
  const Eigen::MatrixXd C = cross_gram(X, L, kernel);
  const SymmetricEigen e = symmetric_eigen(gram(L, kernel));
  const double wmax = e.values.size() > 0 ? e.values(0) : 0.0;
  Eigen::Index keep = 0;
  while (keep < e.values.size() && e.values(keep) > 1e-12 * wmax) ++keep;
  Eigen::VectorXd inv_sqrt = e.values.head(keep).cwiseSqrt().cwiseInverse();
  LowRankFactor f;
  f.G = C * (e.vectors.leftCols(keep) * inv_sqrt.asDiagonal());
  f.pivots = idx;
  const Eigen::VectorXd norms = X.rowwise().squaredNorm();
  double tr = 0.0, res = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double kii = kernel.diagonal(norms(i));
    tr += kii;
    res += std::max(0.0, kii - f.G.row(i).squaredNorm());
  }
  f.trace = tr;
  f.residual_trace = res;
  return f;
}

KccaResult kcca_from_factors(const Eigen::MatrixXd& Gu_in, const Eigen::MatrixXd& Gm_in,
                             const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();
  if (Gu_in.rows() != Gm_in.rows()) {
    throw std::invalid_argument("kcca_from_factors(): factors have " +
                                std::to_string(Gu_in.rows()) + " and " +
                                std::to_string(Gm_in.rows()) + " rows (sample counts must match)");
  }
  const Eigen::Index n = Gu_in.rows();
  if (n < 2) {
    throw std::invalid_argument("kcca_from_factors(): n (" + std::to_string(n) + ") must be >= 2");
  }
  if (options.components > n) {
    throw std::invalid_argument("kcca_from_factors(): components (" +
                                std::to_string(options.components) + ") must be <= n (" +
                                std::to_string(n) + ")");
  }
  if (!Gu_in.allFinite() || !Gm_in.allFinite()) {
    throw std::invalid_argument("kcca_from_factors(): factor contains NaN or Inf");
  }
  KccaResult res;
  res.n = n;
  res.centered = options.center;
  res.method = KccaMethod::kLowRank;
  res.regularizer = options.regularizer;
  res.gamma_u = options.effective_gamma_u(n);
  res.gamma_m = options.effective_gamma_m(n);
  if (!(res.gamma_u > 0.0 && res.gamma_m > 0.0)) {
    throw std::invalid_argument(
        "kcca_from_factors(): the low-rank solver needs gamma_u, "
        "gamma_m > 0 (got " +
        num(res.gamma_u) + ", " + num(res.gamma_m) + ")");
  }
  Eigen::MatrixXd Gu = Gu_in, Gm = Gm_in;
  if (options.center) {
    Gu.rowwise() -= Gu.colwise().mean();
    Gm.rowwise() -= Gm.colwise().mean();
  }
  const Spectrum su = factor_spectrum(Gu, options.drop_tolerance, "u");
  return solve_spectra(su, factor_spectrum(Gm, options.drop_tolerance, "m"), options, res, t0);
}

KccaResult kcca_low_rank(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, const Kernel& ku,
                         const Kernel& km, const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();
  if (U.rows() != M.rows()) {
    throw std::invalid_argument("kcca_low_rank(): U has " + std::to_string(U.rows()) +
                                " rows, M has " + std::to_string(M.rows()) + " (must match)");
  }
  LowRankFactor fu, fm;
  if (options.low_rank == LowRankMethod::kIncompleteCholesky) {
    fu = incomplete_cholesky(U, ku, options.rank, options.tolerance);
    fm = incomplete_cholesky(M, km, options.rank, options.tolerance);
  } else {
    fu = nystrom(U, ku, options.rank, derive_seed(options.seed, 0));
    fm = nystrom(M, km, options.rank, derive_seed(options.seed, 1));
  }
  KccaResult res = kcca_from_factors(fu.G, fm.G, options);
  res.iterations = static_cast<int>(std::max(fu.G.cols(), fm.G.cols()));
  res.residual_trace_u = fu.residual_trace;
  res.residual_trace_m = fm.residual_trace;
  const double c = options.regularizer == KccaRegularizer::kPaper ? 1.0 : 2.0;
  res.approximation_bound = c * (fu.residual_trace / res.gamma_u + fm.residual_trace / res.gamma_m);
  res.seconds = elapsed(t0);
  return res;
}

}  // namespace moca::kcca
