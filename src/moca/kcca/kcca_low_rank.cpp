// The low-rank KCCA solvers: factors by incomplete Cholesky or Nyström, then the reduced
// problem of the factors' spectra (shared with the exact solver's spectral route).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/detail/solvers.hpp"

namespace moca::kcca {

using detail::elapsed;
using detail::num;
using detail::solve_spectra;
using detail::Spectrum;
using detail::truncate;

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
    throw_invalid("", std::string(fn) + ": data is " + std::to_string(X.rows()) + " x " +
                          std::to_string(X.cols()) + " (need >= 2 rows and >= 1 column)");
  }
  if (!X.allFinite()) throw_invalid("", std::string(fn) + ": data contains NaN or Inf");
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
    throw_invalid("incomplete_cholesky()",
                  "max_rank (" + std::to_string(max_rank) + ") must be >= 1");
  }
  if (!(tolerance >= 0.0 && std::isfinite(tolerance))) {
    throw_invalid("incomplete_cholesky()",
                  "tolerance (" + num(tolerance) + ") must be finite and >= 0");
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
    throw_invalid("nystrom()", "rank (" + std::to_string(rank) + ") must be >= 1");
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
    throw_invalid("kcca_from_factors()", "factors have " + std::to_string(Gu_in.rows()) + " and " +
                                             std::to_string(Gm_in.rows()) +
                                             " rows (sample counts must match)");
  }
  const Eigen::Index n = Gu_in.rows();
  if (n < 2) {
    throw_invalid("kcca_from_factors()", "n (" + std::to_string(n) + ") must be >= 2");
  }
  if (options.components > n) {
    throw_invalid("kcca_from_factors()", "components (" + std::to_string(options.components) +
                                             ") must be <= n (" + std::to_string(n) + ")");
  }
  if (!Gu_in.allFinite() || !Gm_in.allFinite()) {
    throw_invalid("kcca_from_factors()", "factor contains NaN or Inf");
  }
  KccaResult res;
  res.n = n;
  res.centered = options.center;
  res.method = KccaMethod::kLowRank;
  res.regularizer = options.regularizer;
  res.gamma_u = options.effective_gamma_u(n);
  res.gamma_m = options.effective_gamma_m(n);
  if (!(res.gamma_u > 0.0 && res.gamma_m > 0.0)) {
    throw_invalid("kcca_from_factors()",
                  "the low-rank solver needs gamma_u, "
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
    throw_invalid("kcca_low_rank()", "U has " + std::to_string(U.rows()) + " rows, M has " +
                                         std::to_string(M.rows()) + " (must match)");
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
