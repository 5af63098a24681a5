#include "moca/kcca/linear_cca.hpp"

#include <Spectra/SymEigsSolver.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca {

namespace {

// An orthonormal basis of a centred view's (PCA) column space and its singular values.
struct ViewBasis {
  Eigen::MatrixXd Q;          // n x r, orthonormal columns
  Eigen::VectorXd s;          // r singular values of the centred view along Q, descending
  Eigen::VectorXd explained;  // PCA: s^2 / total variance; else empty
  Eigen::Index rank = 0;      // numerical rank of the centred view
  double residual = 0.0;      // PCA eigen-residual (relative)
  Eigen::MatrixXd V;          // with weights: d x r right singular vectors, Xc V = Q diag(s)
};

// Canonical correlations (and weights) of two views given their bases.
LinearCcaResult canonical_correlations(const ViewBasis& bu, const ViewBasis& bm, Eigen::Index n,
                                       Eigen::Index columns_u, Eigen::Index columns_m,
                                       const LinearCcaOptions& options);

// Block Krylov with Rayleigh–Ritz (Musco & Musco 2015) for the top-k eigenpairs of a symmetric
// PSD matrix A: all work is GEMMs (compute-bound), unlike Lanczos' matrix-vector products. The
// Krylov space grows by blocks of b = k + 16 columns (starting block A Omega, Omega Gaussian with
// a fixed seed) up to max_cols; after each block the Ritz pairs are formed and the iteration
// stops once every wanted pair has residual |A u - theta u| <= tol * theta_1. `out` holds the
// last Ritz pairs; returns the achieved max relative residual.
double block_krylov_top(const Eigen::MatrixXd& A, Eigen::Index k, double tol, Eigen::Index max_cols,
                        SymmetricEigen& out) {
  const Eigen::Index m = A.rows();
  const Eigen::Index b = std::min<Eigen::Index>(m, k + 16);
  Rng rng(0x6d6f6361ULL);  // fixed: the result must not depend on a caller's seed
  Eigen::MatrixXd V(m, b);
  for (Eigen::Index j = 0; j < b; ++j) {
    for (Eigen::Index i = 0; i < m; ++i) V(i, j) = standard_normal(rng);
  }
  V = product(A, V);
  Eigen::MatrixXd Q(m, 0), AQ(m, 0);
  double residual = std::numeric_limits<double>::infinity();
  while (Q.cols() + b <= std::max(max_cols, k + b)) {
    for (int pass = 0; pass < 2 && Q.cols() > 0; ++pass) V -= product(Q, transpose_product(Q, V));
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(V);
    const Eigen::MatrixXd Qv = qr.householderQ() * Eigen::MatrixXd::Identity(m, b);
    const Eigen::MatrixXd AQv = product(A, Qv);
    const Eigen::Index c = Q.cols();
    Q.conservativeResize(Eigen::NoChange, c + b);
    AQ.conservativeResize(Eigen::NoChange, c + b);
    Q.rightCols(b) = Qv;
    AQ.rightCols(b) = AQv;
    const bool last = Q.cols() + b > std::max(max_cols, k + b);
    if ((tol > 0.0 && Q.cols() >= k + b) || last) {
      Eigen::MatrixXd T = transpose_product(Q, AQ);
      T = (0.5 * (T + T.transpose())).eval();
      const SymmetricEigen e = symmetric_eigen(T);
      const Eigen::Index kk = std::min<Eigen::Index>(k, e.values.size());
      const Eigen::MatrixXd Y = e.vectors.leftCols(kk);
      out.values = e.values.head(kk);
      out.vectors = product(Q, Y);
      const Eigen::MatrixXd R = product(AQ, Y) - out.vectors * out.values.asDiagonal();
      const double theta1 = std::max(e.values(0), std::numeric_limits<double>::min());
      residual = R.colwise().norm().maxCoeff() / theta1;
      if (residual <= tol) return residual;
    }
    V = AQv;
  }
  return residual;
}

// Spectra operator x -> A x for a symmetric A (lower triangle) through BLAS dsymv (multi-threaded)
// instead of Spectra's DenseSymMatProd (Eigen, one thread): the Lanczos mat-vecs were 27 % of
// kcca_score's default run.
class SymMatProd {
 public:
  using Scalar = double;
  explicit SymMatProd(const Eigen::MatrixXd& A) : A_(A) {}
  Eigen::Index rows() const { return A_.rows(); }
  Eigen::Index cols() const { return A_.cols(); }
  void perform_op(const double* x, double* y) const { symmetric_matvec_lower(A_, x, y); }

 private:
  const Eigen::MatrixXd& A_;
};

// Top-k eigenpairs (descending) of a symmetric PSD matrix A. Exact: Spectra's Lanczos (tolerance
// 1e-12), the dense solver for small problems or if Lanczos fails. Randomized: block Krylov of
// depth `iterations`. `residual` receives max |A u - theta u| / theta_1 (0 for the dense solver).
SymmetricEigen top_eigen(const Eigen::MatrixXd& A, Eigen::Index k, PcaSolver solver, int iterations,
                         double& residual) {
  const Eigen::Index m = A.rows();
  residual = 0.0;
  auto dense = [&]() {
    SymmetricEigen e = symmetric_eigen(A);
    e.values.conservativeResize(k);
    e.vectors.conservativeResize(Eigen::NoChange, k);
    return e;
  };
  if (k >= m / 4 || m <= 128) return dense();
  SymmetricEigen e;
  if (solver == PcaSolver::kRandomized) {
    const Eigen::Index b = std::min<Eigen::Index>(m, k + 16);
    residual = block_krylov_top(A, k, 0.0, b * (iterations + 1), e);
    return e;
  }
  SymMatProd op(A);
  const Eigen::Index ncv = std::min<Eigen::Index>(m, std::max<Eigen::Index>(2 * k + 1, k + 20));
  Spectra::SymEigsSolver<SymMatProd> eigs(op, k, ncv);
  eigs.init();
  eigs.compute(Spectra::SortRule::LargestAlge, 1000, 1e-12);
  if (eigs.info() != Spectra::CompInfo::Successful) return dense();
  e.values = eigs.eigenvalues();
  e.vectors = eigs.eigenvectors();
  const Eigen::MatrixXd R = product(A, e.vectors) - e.vectors * e.values.asDiagonal();
  residual = R.colwise().norm().maxCoeff() / std::max(e.values(0), 1e-300);
  return e;
}

// PCA of a view from its centred n x n Gram G = Xc Xcᵀ (n <= d) or d x d scatter XcᵀXc:
// top-k eigenpairs `e`, numerical rank, s and explained variance. For the Gram, Q = the
// eigenvectors (set here); for the scatter the caller forms the scores.
ViewBasis pca_basis(const Eigen::MatrixXd& A, Eigen::Index k, const LinearCcaOptions& o,
                    const char* view, SymmetricEigen& e) {
  ViewBasis b;
  const double total = A.trace();
  e = top_eigen(A, k, o.pca_solver, o.pca_iterations, b.residual);
  if (!(total > 0.0) || !(e.values(0) > 0.0)) {
    throw_invalid("", std::string("linear_cca(): view ") + view +
                          " has no variance (every column is constant)");
  }
  const double smax = std::sqrt(e.values(0));
  Eigen::Index r = 0;
  while (r < k && e.values(r) > 0.0 && std::sqrt(e.values(r)) > o.rank_tolerance * smax) ++r;
  b.rank = r;
  b.s = e.values.head(r).cwiseSqrt();
  b.explained = e.values.head(r) / total;
  b.Q = e.vectors.leftCols(r);
  return b;
}

ViewBasis gram_basis(const Eigen::MatrixXd& G, Eigen::Index k, const LinearCcaOptions& o,
                     const char* view) {
  SymmetricEigen e;
  return pca_basis(G, k, o, view, e);
}

ViewBasis view_basis(const Eigen::MatrixXd& X, const LinearCcaOptions& o, bool need_values,
                     const char* view) {
  need_values = need_values || o.weights;  // weights need s and V: the SVD route, not QR
  const int pca = o.pca;
  const double tol = o.rank_tolerance;
  const Eigen::Index n = X.rows(), d = X.cols();
  Eigen::MatrixXd Xc = X;
  Xc.rowwise() -= X.colwise().mean();
  ViewBasis b;
  if (pca > 0) {
    // PCA through the smaller of the n x n Gram and the d x d scatter.
    const Eigen::Index m = std::min(n, d);
    const Eigen::Index k = std::min<Eigen::Index>(pca, m);
    if (n <= d) {
      b = gram_basis(outer_product(Xc), k, o, view);
      if (o.weights) {  // V = Xcᵀ Q diag(1/s)
        b.V = transpose_product(Xc, b.Q);
        for (Eigen::Index j = 0; j < b.rank; ++j) b.V.col(j) /= b.s(j);
      }
      return b;
    }
    SymmetricEigen e;
    b = pca_basis(transpose_product(Xc, Xc), k, o, view, e);
    const Eigen::Index r = b.rank;
    b.Q = product(Xc, e.vectors.leftCols(r));  // scores X v = s u
    for (Eigen::Index j = 0; j < r; ++j) b.Q.col(j) /= b.s(j);
    if (o.weights) b.V = e.vectors.leftCols(r);
    return b;
  }
  if (need_values) {
    const ThinSvd svd = thin_svd(Xc, true);
    if (svd.values.size() == 0 || !(svd.values(0) > 0.0)) {
      throw_invalid("", std::string("linear_cca(): view ") + view +
                            " has no variance (every column is constant)");
    }
    Eigen::Index r = 0;
    while (r < svd.values.size() && svd.values(r) > tol * svd.values(0)) ++r;
    b.rank = r;
    b.s = svd.values.head(r);
    b.Q = svd.u.leftCols(r);
    if (o.weights) b.V = svd.v.leftCols(r);
    return b;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Xc);
  const double rmax = qr.maxPivot();
  if (!(rmax > 0.0)) {
    throw_invalid("", std::string("linear_cca(): view ") + view +
                          " has no variance (every column is constant)");
  }
  qr.setThreshold(tol);
  b.rank = qr.rank();
  b.Q = qr.householderQ() * Eigen::MatrixXd::Identity(n, b.rank);
  return b;
}

}  // namespace

void LinearCcaOptions::validate() const {
  if (pca < 0) {
    throw_invalid("LinearCcaOptions::validate()",
                  "pca (" + std::to_string(pca) + ") must be >= 0 (0 = no PCA)");
  }
  if (!(std::isfinite(ridge) && ridge >= 0.0)) {
    throw_invalid("LinearCcaOptions::validate()",
                  "ridge (" + format_number(ridge, 12) + ") must be finite and >= 0");
  }
  if (components < 1) {
    throw_invalid("LinearCcaOptions::validate()",
                  "components (" + std::to_string(components) + ") must be >= 1");
  }
  if (pca_iterations < 1) {
    throw_invalid("LinearCcaOptions::validate()",
                  "pca_iterations (" + std::to_string(pca_iterations) + ") must be >= 1");
  }
  if (!(rank_tolerance >= 0.0 && rank_tolerance < 1.0)) {
    throw_invalid("LinearCcaOptions::validate()",
                  "rank_tolerance (" + format_number(rank_tolerance, 12) + ") must be in [0, 1)");
  }
}

double wachter_edge(int p, int q, int n) {
  if (p < 1 || q < 1 || n < 1) {
    throw_invalid("wachter_edge()", "p (" + std::to_string(p) + "), q (" + std::to_string(q) +
                                        ") and n (" + std::to_string(n) + ") must be >= 1");
  }
  if (p + q >= n) return 1.0;
  const double a = static_cast<double>(p) / n, b = static_cast<double>(q) / n;
  return std::min(1.0, std::sqrt(a * (1.0 - b)) + std::sqrt(b * (1.0 - a)));
}

LinearCcaResult linear_cca(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M,
                           const LinearCcaOptions& options) {
  options.validate();
  if (U.rows() != M.rows()) {
    throw_invalid("linear_cca()", "U has " + std::to_string(U.rows()) + " rows, M has " +
                                      std::to_string(M.rows()) + " (must match)");
  }
  if (U.rows() < 3) {
    throw_invalid("linear_cca()", "n (" + std::to_string(U.rows()) + ") must be >= 3");
  }
  if (U.cols() < 1 || M.cols() < 1) {
    throw_invalid("linear_cca()", "views need >= 1 column (U has " + std::to_string(U.cols()) +
                                      ", M has " + std::to_string(M.cols()) + ")");
  }
  if (!U.allFinite() || !M.allFinite()) {
    throw_invalid("linear_cca()", "data contains NaN or Inf");
  }
  const bool ridge = options.ridge > 0.0;
  const ViewBasis bu = view_basis(U, options, ridge, "u");
  const ViewBasis bm = view_basis(M, options, ridge, "m");
  return canonical_correlations(bu, bm, U.rows(), U.cols(), M.cols(), options);
}

LinearCcaResult linear_cca_from_grams(const Eigen::MatrixXd& Gu, const Eigen::MatrixXd& Gm,
                                      Eigen::Index columns_u, Eigen::Index columns_m,
                                      const LinearCcaOptions& options) {
  options.validate();
  const Eigen::Index n = Gu.rows();
  if (Gu.cols() != n || Gm.rows() != n || Gm.cols() != n) {
    throw_invalid("linear_cca_from_grams()",
                  "Grams are " + std::to_string(n) + " x " + std::to_string(Gu.cols()) + " and " +
                      std::to_string(Gm.rows()) + " x " + std::to_string(Gm.cols()) +
                      " (must be n x n, same n)");
  }
  if (n < 3) {
    throw_invalid("linear_cca_from_grams()", "n (" + std::to_string(n) + ") must be >= 3");
  }
  if (options.pca < 1 || options.weights || columns_u < n || columns_m < n) {
    throw_invalid("linear_cca_from_grams()",
                  "needs pca >= 1 (" + std::to_string(options.pca) +
                      "), no weights, and views at least as wide as n (" +
                      std::to_string(columns_u) + ", " + std::to_string(columns_m) +
                      " columns, n " + std::to_string(n) + ")");
  }
  if (!Gu.allFinite() || !Gm.allFinite()) {
    throw_invalid("linear_cca_from_grams()", "a Gram contains NaN or Inf");
  }
  const Eigen::Index k = std::min<Eigen::Index>(options.pca, n);
  const ViewBasis bu = gram_basis(Gu, k, options, "u");
  const ViewBasis bm = gram_basis(Gm, k, options, "m");
  return canonical_correlations(bu, bm, n, columns_u, columns_m, options);
}

namespace {

LinearCcaResult canonical_correlations(const ViewBasis& bu, const ViewBasis& bm, Eigen::Index n,
                                       Eigen::Index columns_u, Eigen::Index columns_m,
                                       const LinearCcaOptions& options) {
  const bool ridge = options.ridge > 0.0;
  LinearCcaResult res;
  res.n = static_cast<int>(n);
  res.p = static_cast<int>(bu.Q.cols());
  res.q = static_cast<int>(bm.Q.cols());
  res.columns_u = static_cast<int>(columns_u);
  res.columns_m = static_cast<int>(columns_m);
  res.explained_variance_u = bu.explained;
  res.explained_variance_m = bm.explained;
  res.pca_residual = std::max(bu.residual, bm.residual);
  Eigen::MatrixXd A = transpose_product(bu.Q, bm.Q);
  if (ridge) {
    const Eigen::VectorXd fu =
        (bu.s.array() / (bu.s.array().square() + options.ridge).sqrt()).matrix();
    const Eigen::VectorXd fm =
        (bm.s.array() / (bm.s.array().square() + options.ridge).sqrt()).matrix();
    A = fu.asDiagonal() * A * fm.asDiagonal();
  }
  const ThinSvd svd = thin_svd(A, options.weights);
  res.correlations = Eigen::VectorXd::Zero(options.components);
  const Eigen::Index avail = std::min<Eigen::Index>(options.components, svd.values.size());
  res.correlations.head(avail) = svd.values.head(avail).cwiseMin(1.0).cwiseMax(0.0);
  if (options.weights) {
    // w = V diag(1 / sqrt(s^2 + ridge)) a for the singular vector a of A: then
    // wᵀ(XcᵀXc + ridge I) w = |a|^2 = 1 and Xc w = Q diag(s / sqrt(s^2 + ridge)) a.
    auto weights = [&](const ViewBasis& b, const Eigen::MatrixXd& vectors, Eigen::Index cols) {
      Eigen::MatrixXd w = Eigen::MatrixXd::Zero(cols, options.components);
      const Eigen::VectorXd scale =
          (b.s.array().square() + options.ridge).sqrt().inverse().matrix();
      w.leftCols(avail) = b.V * (scale.asDiagonal() * vectors.leftCols(avail));
      return w;
    };
    res.weights_u = weights(bu, svd.u, columns_u);
    res.weights_m = weights(bm, svd.v, columns_m);
  }
  res.null_level = wachter_edge(res.p, res.q, res.n);
  std::string warn;
  if (!ridge && res.n - 1 <= res.p + res.q) {
    warn = "n - 1 (" + std::to_string(res.n - 1) + ") <= p + q (" + std::to_string(res.p) + " + " +
           std::to_string(res.q) +
           "): unregularised CCA is trivially 1; reduce dimensions (pca) or add a ridge";
  }
  auto lost = [&](const ViewBasis& b, Eigen::Index cols, const char* view) {
    const Eigen::Index want = options.pca > 0 ? std::min<Eigen::Index>({options.pca, cols, n - 1})
                                              : std::min<Eigen::Index>(cols, n - 1);
    if (b.Q.cols() < want) {
      if (!warn.empty()) warn += "; ";
      warn += std::string("view ") + view + " has rank " + std::to_string(b.Q.cols()) + " < " +
              std::to_string(want) + " (zero-variance or collinear columns)";
    }
  };
  lost(bu, columns_u, "u");
  lost(bm, columns_m, "m");
  res.warning = warn;
  return res;
}

}  // namespace

}  // namespace moca::kcca
