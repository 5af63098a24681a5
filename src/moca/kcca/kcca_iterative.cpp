// The iterative KCCA solver: block Krylov with Rayleigh–Ritz on the product of the two views'
// smoothers. Dispatched from kcca.cpp. Every operator application is a block of right-hand sides
// (LAPACK dpotrs, BLAS-3), so the n x n Cholesky factors are streamed from memory once per block
// rather than once per vector as in a one-vector Arnoldi loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/kcca/detail/solvers.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca::detail {

namespace {

// X <- S X for a view's smoother S = K (K + gamma I)^{-1} = I - gamma (K + gamma I)^{-1} (paper),
// applied twice for Bach–Jordan's S = [K (K + gamma I)^{-1}]^2; L is the Cholesky factor of
// K + gamma I. One block solve (dpotrs) per application.
void apply_smoother(const Eigen::MatrixXd& L, double gamma, KccaRegularizer reg,
                    Eigen::MatrixXd& X) {
  const int reps = reg == KccaRegularizer::kPaper ? 1 : 2;
  for (int r = 0; r < reps; ++r) {
    Eigen::MatrixXd W = X;
    cholesky_solve_in_place(L, W);
    X -= gamma * W;
  }
}

// Normalises alpha (columns) so that alphaᵀ R alpha = 1 given K alpha and (K + gamma I) alpha.
double regulariser_norm(const Eigen::VectorXd& Ka, const Eigen::VectorXd& a, double gamma,
                        KccaRegularizer reg) {
  if (reg == KccaRegularizer::kPaper) return std::sqrt(Ka.squaredNorm() + gamma * a.dot(Ka));
  return (Ka + gamma * a).norm();
}

// The pairs in descending order of correlation (the Ritz values come sorted already; keep it
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

// The top-k eigenpairs of T = S_u S_m by block Krylov with Rayleigh–Ritz. T is not symmetric
// but is self-adjoint in the (semi-)inner product <x, y> = xᵀ S_m y (S_m T = S_m S_u S_m), and its
// eigenvalues are the squared canonical correlations. With an orthonormal basis Q of the block
// Krylov space span{X, T X, T^2 X, ...}, W = S_m Q and Z = S_u W = T Q, the Ritz pairs solve
// the small symmetric-definite problem (Wᵀ Z) y = theta (Qᵀ W) y; both small matrices grow by
// one block row and column per step. The eigenvalues of Qᵀ W are S_m-Rayleigh quotients
// xᵀ S_m x / xᵀ x in [0, 1); directions below 1e-10 are left out (null and near-null directions
// of S_m, e.g. the constant after centring, or the rounding-level spectrum of a near-singular
// Gram, which would otherwise amplify rounding by 1 / sqrt of it). No wanted eigenvector is
// lost: from S_u S_m x = theta x and |S_u|, |S_m| <= 1, theta^2 xᵀ x <= xᵀ S_m x, so an
// eigenvector with theta >= 1e-5 (a correlation >= 0.0032) has a quotient >= 1e-10.
// The Ritz values grow monotonically with the space; the iteration stops when none of the wanted
// ones moved by more than tol * theta_1 / 100 in the last step (the margin lets the vectors, whose
// error is about the square root of the values', settle too) (not counted right after a restart,
// whose space holds the previous Ritz vectors), restarts from the best b Ritz vectors when the
// basis is full, and gives up after max_restarts restarts. A tolerance below 4 machine epsilons
// cannot be certified and never converges. The Ritz vectors are returned purified, x <- T x = Z y:
// an eigenvector of T lies in the range of S_u, while x = Q y is fixed only up to null(S_m).
struct BlockKrylovResult {
  Eigen::VectorXd theta;  // Ritz values, descending (at most k)
  Eigen::MatrixXd x;      // n x theta.size() Ritz vectors
  int applications = 0;   // block applications of T
  int restarts = 0;
  bool converged = false;
  double change = 0.0;  // largest change of a returned value in the last step, relative to theta_1
};

BlockKrylovResult block_krylov_product(const Eigen::MatrixXd& lu, const Eigen::MatrixXd& lm,
                                       double gu, double gm, KccaRegularizer reg, Eigen::Index k,
                                       double tol, int max_restarts) {
  const Eigen::Index n = lu.rows();
  // Block size: k plus a margin of 16, which speeds convergence (at n = 5000, k = 3: 13 block
  // applications with 19 columns, 19 with 8, 12 with 32; a block solve of a few dozen columns
  // costs about what streaming the n x n factor from memory does).
  const Eigen::Index b = std::min<Eigen::Index>(n, k + 16);
  // Basis size before a restart: the whole space for n <= 200 (the Ritz pairs are then exact at
  // the latest when it is spanned); else 16 blocks and at most half the space, so that a restart
  // count means something.
  const Eigen::Index max_cols =
      n <= 200 ? n : std::max<Eigen::Index>(b, std::min<Eigen::Index>(16 * b, n / 2));
  const bool certifiable = tol >= 4 * std::numeric_limits<double>::epsilon();
  Rng rng(0x6b636361ULL);  // fixed: the result must not depend on a caller's seed
  Eigen::MatrixXd V(n, b);
  for (Eigen::Index j = 0; j < b; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) V(i, j) = standard_normal(rng);
  }
  BlockKrylovResult out;
  Eigen::MatrixXd Q(n, 0), W(n, 0), Z(n, 0), G(0, 0), H(0, 0);
  Eigen::VectorXd previous;  // the last step's Ritz values, same cycle
  while (true) {
    // Orthonormalise the new block against the basis (twice: classical Gram–Schmidt loses
    // orthogonality once), then QR within the block.
    for (int pass = 0; pass < 2 && Q.cols() > 0; ++pass) V -= product(Q, transpose_product(Q, V));
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(V);
    const Eigen::Index nb = std::min<Eigen::Index>(V.cols(), max_cols - Q.cols());
    const Eigen::MatrixXd Qv = qr.householderQ() * Eigen::MatrixXd::Identity(n, nb);
    Eigen::MatrixXd Wv = Qv;
    apply_smoother(lm, gm, reg, Wv);
    Eigen::MatrixXd Zv = Wv;
    apply_smoother(lu, gu, reg, Zv);
    ++out.applications;
    const Eigen::Index c = Q.cols(), p = c + nb;
    Q.conservativeResize(Eigen::NoChange, p);
    W.conservativeResize(Eigen::NoChange, p);
    Z.conservativeResize(Eigen::NoChange, p);
    Q.rightCols(nb) = Qv;
    W.rightCols(nb) = Wv;
    Z.rightCols(nb) = Zv;
    // G = Qᵀ W and H = Wᵀ Z (both symmetric): the new block column, mirrored.
    const Eigen::MatrixXd g_new = transpose_product(Q, Wv), h_new = transpose_product(W, Zv);
    G.conservativeResize(p, p);
    H.conservativeResize(p, p);
    G.rightCols(nb) = g_new;
    H.rightCols(nb) = h_new;
    G.bottomLeftCorner(nb, c) = g_new.topRows(c).transpose();
    H.bottomLeftCorner(nb, c) = h_new.topRows(c).transpose();
    G.bottomRightCorner(nb, nb) =
        (0.5 * (g_new.bottomRows(nb) + g_new.bottomRows(nb).transpose())).eval();
    H.bottomRightCorner(nb, nb) =
        (0.5 * (h_new.bottomRows(nb) + h_new.bottomRows(nb).transpose())).eval();
    // Rayleigh–Ritz on the whole basis.
    const SymmetricEigen eg = symmetric_eigen(G);
    Eigen::Index r = 0;
    while (r < eg.values.size() && eg.values(r) > 1e-10) ++r;
    Eigen::MatrixXd C = eg.vectors.leftCols(r);
    for (Eigen::Index j = 0; j < r; ++j) C.col(j) /= std::sqrt(eg.values(j));
    Eigen::MatrixXd Hr = C.transpose() * H * C;
    Hr = (0.5 * (Hr + Hr.transpose())).eval();
    const SymmetricEigen eh = symmetric_eigen(Hr);
    const Eigen::Index kk = std::min<Eigen::Index>(k, eh.values.size());
    out.theta = eh.values.head(kk);
    const double theta1 = kk > 0 ? std::max(out.theta(0), std::numeric_limits<double>::min())
                                 : std::numeric_limits<double>::min();
    const bool compared = previous.size() == kk && c > 0;
    out.change = compared ? (out.theta - previous).cwiseAbs().maxCoeff() / theta1
                          : std::numeric_limits<double>::infinity();
    previous = out.theta;
    const bool spanned = Q.cols() >= n;  // exact up to rounding
    const bool full = Q.cols() >= max_cols;
    const bool done = spanned || (certifiable && kk == k && out.change <= 0.01 * tol);
    if (done || (full && out.restarts >= max_restarts)) {
      out.converged = done;
      out.x = product(Z, C * eh.vectors.leftCols(kk));  // purified: T (Q y)
      return out;
    }
    if (full) {
      ++out.restarts;
      // Restart from the leading Ritz vectors (the b best of the current space).
      const Eigen::Index keep = std::min<Eigen::Index>(b, eh.values.size());
      V = product(Q, C * eh.vectors.leftCols(keep));
      Q.resize(n, 0);
      W.resize(n, 0);
      Z.resize(n, 0);
      G.resize(0, 0);
      H.resize(0, 0);
      previous.resize(0);
      if (V.cols() == 0) return out;
      continue;
    }
    V = Zv;
  }
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
  const BlockKrylovResult bk =
      block_krylov_product(lu, lm, gu, gm, o.regularizer, k, o.tolerance, o.max_iterations);
  res.iterations = bk.applications;
  res.status = bk.converged ? SolverStatus::kSuccess : SolverStatus::kNotConverged;
  if (!bk.converged) {
    res.message = "block Krylov did not converge in " + std::to_string(o.max_iterations) +
                  " restarts (tolerance " + num(o.tolerance) + ", last relative change " +
                  num(bk.change) + ")";
  }
  res.correlations = Eigen::VectorXd::Zero(k);
  res.alpha = Eigen::MatrixXd::Zero(n, k);
  res.beta = Eigen::MatrixXd::Zero(n, k);
  Eigen::MatrixXd var_u = Eigen::MatrixXd::Zero(n, k);  // K_u alpha
  const Eigen::Index got = bk.theta.size();
  if (got == 0) return res;
  // beta from the stationary equations (see kcca.hpp), then alpha from beta: paper
  // beta = W_m x, alpha = W_u K_m beta; Bach–Jordan one more W K on each side; W = (K + gamma
  // I)^{-1} and K W v = v - gamma W v. All columns at once (block solves).
  const bool bj = o.regularizer == KccaRegularizer::kBachJordan;
  auto smooth = [](const Eigen::MatrixXd& L, double gamma, Eigen::MatrixXd& v, Eigen::MatrixXd& w) {
    w = v;
    cholesky_solve_in_place(L, w);
    v -= gamma * w;  // K w
  };
  Eigen::MatrixXd Kb = bk.x, beta, Ka, alpha;
  smooth(lm, gm, Kb, beta);
  if (bj) smooth(lm, gm, Kb, beta);
  Ka = Kb;
  smooth(lu, gu, Ka, alpha);
  if (bj) smooth(lu, gu, Ka, alpha);
  for (Eigen::Index j = 0; j < got; ++j) {
    const double r2 = std::min(1.0, std::max(0.0, bk.theta(j)));
    res.correlations(j) = std::sqrt(r2);
    if (r2 <= 0.0) continue;
    const double na = regulariser_norm(Ka.col(j), alpha.col(j), gu, o.regularizer);
    const double nb = regulariser_norm(Kb.col(j), beta.col(j), gm, o.regularizer);
    if (!(na > 0.0 && nb > 0.0)) continue;
    res.alpha.col(j) = alpha.col(j) / na;
    res.beta.col(j) = beta.col(j) / nb;
    var_u.col(j) = Ka.col(j) / na;
  }
  return sorted_by_correlation(res, var_u);
}

}  // namespace moca::kcca::detail
