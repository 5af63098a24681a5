// The iterative KCCA solver: Arnoldi (Spectra) on the product of the two views' smoothers.
// Dispatched from kcca.cpp. Includes Spectra's GenEigsSolver, hence UpperHessenbergEigen (see
// the -Wno-use-after-free note in CMakeLists.txt).
#include <Spectra/GenEigsSolver.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/kcca/detail/solvers.hpp"

namespace moca::kcca::detail {

namespace {

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

// The solver's status from Spectra's.
void set_status(Spectra::CompInfo info, const KccaOptions& o, KccaResult& res) {
  switch (info) {
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
}

// The pairs in descending order of correlation (Spectra sorts by real part already; keep it
// explicit), signs fixed by the u variates var_u = K_u alpha.
KccaResult sorted_by_correlation(const KccaResult& res, const Eigen::MatrixXd& var_u) {
  const Eigen::Index n = res.alpha.rows(), k = res.correlations.size();
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

}  // namespace

// Iterative solver on the prepared (symmetric, centred) Grams, which it overwrites with the
// Cholesky factors of K + gamma I: no further n x n buffer. K itself is not needed afterwards
// because K (K + gamma I)^{-1} v = v - gamma (K + gamma I)^{-1} v.
KccaResult kcca_iterative(Eigen::MatrixXd& lu, Eigen::MatrixXd& lm, double gu, double gm,
                          const KccaOptions& o, KccaResult res) {
  const Eigen::Index n = lu.rows();
  const int k = o.components;
  if (!(gu > 0.0 && gm > 0.0)) {
    throw_invalid("kcca()", "the iterative solver needs gamma_u, gamma_m > 0 (got " + num(gu) +
                                ", " + num(gm) + ")");
  }
  if (k > n - 3) {
    throw_invalid("kcca()", "components (" + std::to_string(k) + ") must be <= n - 3 (" +
                                std::to_string(n - 3) +
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
    throw_invalid("kcca()", "K + gamma I is not positive definite for view " +
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
  set_status(eigs.info(), o, res);
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
  return sorted_by_correlation(res, var_u);
}

}  // namespace moca::kcca::detail
