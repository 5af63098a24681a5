#include "moca/kcca/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca {

namespace {

constexpr double kRoundoff = 8.0 * std::numeric_limits<double>::epsilon();

void check_finite(const Eigen::MatrixXd& X, const char* fn, const char* what) {
  if (!X.allFinite()) {
    throw_invalid("", std::string(fn) + ": " + what + " contains NaN or Inf");
  }
}

// Applies the kernel's element-wise map to a matrix of inner products G (m x n) given the
// squared norms of the row sets (for distance-based kernels).
void apply_map(Eigen::MatrixXd& G, const Eigen::VectorXd& nx, const Eigen::VectorXd& ny,
               const Kernel& k, bool symmetric) {
  const Eigen::Index m = G.rows(), n = G.cols();
  switch (k.type) {
    case KernelType::kLinear:
      return;
    case KernelType::kPolynomial: {
      const double c = k.coef0;
      const int deg = k.degree;
#pragma omp parallel for schedule(static)
      for (Eigen::Index j = 0; j < n; ++j) {
        for (Eigen::Index i = 0; i < m; ++i) G(i, j) = std::pow(G(i, j) + c, deg);
      }
      return;
    }
    case KernelType::kGaussian:
    case KernelType::kLaplacian: {
      const bool gauss = k.type == KernelType::kGaussian;
      const double s = gauss ? 1.0 / (2.0 * k.sigma * k.sigma) : 1.0 / k.sigma;
#pragma omp parallel for schedule(static)
      for (Eigen::Index j = 0; j < n; ++j) {
        for (Eigen::Index i = 0; i < m; ++i) {
          // Distances below the rounding level of |x|^2 + |y|^2 - 2<x, y> are 0 (identical
          // rows must give exactly k = 1 even for a tiny bandwidth).
          double d2 = nx(i) + ny(j) - 2.0 * G(i, j);
          if (d2 <= kRoundoff * (nx(i) + ny(j)) || (symmetric && i == j)) d2 = 0.0;
          G(i, j) = gauss ? std::exp(-d2 * s) : std::exp(-std::sqrt(d2) * s);
        }
      }
      return;
    }
  }
}

// The symmetric case of apply_map (same values, bit for bit): maps the lower triangle of G and
// mirrors it, in 64 x 64 tiles so that the transposed writes stay in cache; half the kernel
// evaluations of a full pass.
void map_lower_and_mirror(Eigen::MatrixXd& G, const Eigen::VectorXd& nrm, const Kernel& k) {
  const Eigen::Index n = G.rows();
  constexpr Eigen::Index kTile = 64;
  const Eigen::Index tiles = (n + kTile - 1) / kTile;
  const bool gauss = k.type == KernelType::kGaussian;
  const double s = gauss ? 1.0 / (2.0 * k.sigma * k.sigma) : 1.0 / k.sigma;
  auto value = [&](Eigen::Index i, Eigen::Index j) {
    const double g = G(i, j);
    switch (k.type) {
      case KernelType::kLinear:
        return g;
      case KernelType::kPolynomial:
        return std::pow(g + k.coef0, k.degree);
      case KernelType::kGaussian:
      case KernelType::kLaplacian:
        break;
    }
    double d2 = nrm(i) + nrm(j) - 2.0 * g;
    if (d2 <= kRoundoff * (nrm(i) + nrm(j)) || i == j) d2 = 0.0;
    return gauss ? std::exp(-d2 * s) : std::exp(-std::sqrt(d2) * s);
  };
  // Tile columns hold decreasing work (the triangle): dynamic scheduling.
#pragma omp parallel for schedule(dynamic, 1)
  for (Eigen::Index tj = 0; tj < tiles; ++tj) {
    const Eigen::Index jb = tj * kTile, je = std::min(n, jb + kTile);
    for (Eigen::Index ib = jb; ib < n; ib += kTile) {
      const Eigen::Index ie = std::min(n, ib + kTile);
      for (Eigen::Index j = jb; j < je; ++j) {
        for (Eigen::Index i = std::max(ib, j); i < ie; ++i) {
          const double v = value(i, j);
          G(i, j) = v;
          G(j, i) = v;
        }
      }
    }
  }
}

}  // namespace

std::string kernel_type_name(KernelType type) {
  return enum_name(kKernelTypeNames, type);
}

Kernel Kernel::linear() {
  Kernel k;
  k.type = KernelType::kLinear;
  return k;
}
Kernel Kernel::gaussian(double sigma) {
  Kernel k;
  k.type = KernelType::kGaussian;
  k.sigma = sigma;
  return k;
}
Kernel Kernel::polynomial(int degree, double coef0) {
  Kernel k;
  k.type = KernelType::kPolynomial;
  k.degree = degree;
  k.coef0 = coef0;
  return k;
}
Kernel Kernel::laplacian(double sigma) {
  Kernel k;
  k.type = KernelType::kLaplacian;
  k.sigma = sigma;
  return k;
}

void Kernel::validate() const {
  if ((type == KernelType::kGaussian || type == KernelType::kLaplacian) &&
      !(std::isfinite(sigma) && sigma > 0.0)) {
    throw_invalid("Kernel::validate()",
                  "sigma (" + format_number(sigma, 12) + ") must be finite and > 0");
  }
  if (type == KernelType::kPolynomial) {
    if (degree < 1) {
      throw_invalid("Kernel::validate()", "degree (" + std::to_string(degree) + ") must be >= 1");
    }
    if (!(std::isfinite(coef0) && coef0 >= 0.0)) {
      throw_invalid("Kernel::validate()",
                    "coef0 (" + format_number(coef0, 12) + ") must be finite and >= 0");
    }
  }
}

double Kernel::operator()(const Eigen::Ref<const Eigen::VectorXd>& a,
                          const Eigen::Ref<const Eigen::VectorXd>& b) const {
  if (a.size() != b.size()) {
    throw_invalid("Kernel::operator()", "vector lengths differ (" + std::to_string(a.size()) +
                                            " vs " + std::to_string(b.size()) + ")");
  }
  switch (type) {
    case KernelType::kLinear:
      return a.dot(b);
    case KernelType::kPolynomial:
      return std::pow(a.dot(b) + coef0, degree);
    case KernelType::kGaussian:
      return std::exp(-(a - b).squaredNorm() / (2.0 * sigma * sigma));
    case KernelType::kLaplacian:
      return std::exp(-(a - b).norm() / sigma);
  }
  return 0.0;
}

double Kernel::diagonal(double squared_norm) const {
  switch (type) {
    case KernelType::kLinear:
      return squared_norm;
    case KernelType::kPolynomial:
      return std::pow(squared_norm + coef0, degree);
    case KernelType::kGaussian:
    case KernelType::kLaplacian:
      return 1.0;
  }
  return 0.0;
}

std::string Kernel::describe() const {
  switch (type) {
    case KernelType::kLinear:
      return "linear";
    case KernelType::kPolynomial:
      return "poly(degree=" + std::to_string(degree) + ", coef0=" + format_number(coef0, 12) + ")";
    case KernelType::kGaussian:
      return "rbf(sigma=" + format_number(sigma, 12) + ")";
    case KernelType::kLaplacian:
      return "laplacian(sigma=" + format_number(sigma, 12) + ")";
  }
  return "unknown";
}

Eigen::MatrixXd gram(const Eigen::MatrixXd& X, const Kernel& kernel) {
  kernel.validate();
  check_finite(X, "gram()", "X");
  Eigen::MatrixXd G = outer_product_lower(X);
  const Eigen::VectorXd nrm = G.diagonal();
  map_lower_and_mirror(G, nrm, kernel);
  return G;
}

Eigen::MatrixXd cross_gram(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y,
                           const Kernel& kernel) {
  kernel.validate();
  if (X.cols() != Y.cols()) {
    throw_invalid("cross_gram()", "X has " + std::to_string(X.cols()) + " columns, Y has " +
                                      std::to_string(Y.cols()) + " (must match)");
  }
  check_finite(X, "cross_gram()", "X");
  check_finite(Y, "cross_gram()", "Y");
  Eigen::MatrixXd G = product_transpose(X, Y);
  const Eigen::VectorXd nx = X.rowwise().squaredNorm();
  const Eigen::VectorXd ny = Y.rowwise().squaredNorm();
  apply_map(G, nx, ny, kernel, false);
  return G;
}

double median_heuristic_sigma(const Eigen::MatrixXd& X, std::uint64_t seed, int max_samples) {
  if (X.rows() < 2) {
    throw_invalid("median_heuristic_sigma()",
                  "X has " + std::to_string(X.rows()) + " rows (need >= 2)");
  }
  if (max_samples < 2) {
    throw_invalid("median_heuristic_sigma()",
                  "max_samples (" + std::to_string(max_samples) + ") must be >= 2");
  }
  check_finite(X, "median_heuristic_sigma()", "X");
  std::vector<Eigen::Index> idx(static_cast<size_t>(X.rows()));
  std::iota(idx.begin(), idx.end(), Eigen::Index{0});
  if (X.rows() > max_samples) {
    Rng rng(seed);
    shuffle(idx, rng);
    idx.resize(static_cast<size_t>(max_samples));
  }
  const Eigen::Index m = static_cast<Eigen::Index>(idx.size());
  Eigen::MatrixXd S(m, X.cols());
  for (Eigen::Index i = 0; i < m; ++i) S.row(i) = X.row(idx[static_cast<size_t>(i)]);
  const Eigen::MatrixXd G = outer_product(S);
  std::vector<double> d;
  d.reserve(static_cast<size_t>(m * (m - 1) / 2));
  for (Eigen::Index j = 0; j < m; ++j) {
    for (Eigen::Index i = j + 1; i < m; ++i) {
      d.push_back(std::sqrt(std::max(0.0, G(i, i) + G(j, j) - 2.0 * G(i, j))));
    }
  }
  // Median (mean of the two middle values for an even count).
  const size_t h = d.size() / 2;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(h), d.end());
  double med = d[h];
  if (d.size() % 2 == 0) {
    const double lo = *std::max_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(h));
    med = 0.5 * (med + lo);
  }
  if (!(med > 0.0)) {
    throw_invalid("median_heuristic_sigma()",
                  "median pairwise distance is 0 (at least half of the sampled "
                  "rows coincide); set sigma explicitly");
  }
  return med;
}

// ---------------------------------------------------------------------------------------------

void GakOptions::validate() const {
  if (!(std::isfinite(sigma) && sigma > 0.0)) {
    throw_invalid("GakOptions::validate()",
                  "sigma (" + format_number(sigma, 12) + ") must be finite and > 0");
  }
  if (triangular < 0) {
    throw_invalid("GakOptions::validate()",
                  "triangular (" + std::to_string(triangular) + ") must be >= 0");
  }
}

double log_gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, const GakOptions& options) {
  options.validate();
  if (x.rows() == 0 || y.rows() == 0) {
    throw_invalid("log_gak()", "empty series (lengths " + std::to_string(x.rows()) + ", " +
                                   std::to_string(y.rows()) + ")");
  }
  if (x.cols() != y.cols()) {
    throw_invalid("log_gak()", "series dimensions differ (" + std::to_string(x.cols()) + " vs " +
                                   std::to_string(y.cols()) + ")");
  }
  check_finite(x, "log_gak()", "x");
  check_finite(y, "log_gak()", "y");
  const Eigen::Index n = x.rows(), m = y.rows();
  const int T = options.triangular;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  if (T > 0 && std::abs(n - m) >= T) return kNegInf;
  const double s = 1.0 / (2.0 * options.sigma * options.sigma);
  // Rolling rows of the log DP table; prev(j + 1) is M[i-1, j], with M[-1, -1] = 1.
  Eigen::VectorXd prev = Eigen::VectorXd::Constant(m + 1, kNegInf), cur(m + 1);
  prev(0) = 0.0;
  auto lse3 = [](double a, double b, double c) {
    const double mx = std::max(a, std::max(b, c));
    if (mx == kNegInf) return kNegInf;
    return mx + std::log(std::exp(a - mx) + std::exp(b - mx) + std::exp(c - mx));
  };
  for (Eigen::Index i = 0; i < n; ++i) {
    cur(0) = kNegInf;
    for (Eigen::Index j = 0; j < m; ++j) {
      double logk = kNegInf;
      const Eigen::Index gap = std::abs(i - j);
      if (T == 0 || gap < T) {
        const double d2 = (x.row(i) - y.row(j)).squaredNorm() * s;
        logk = -d2 - std::log(2.0 - std::exp(-d2));
        if (T > 0) logk += std::log(1.0 - static_cast<double>(gap) / T);
      }
      cur(j + 1) = logk == kNegInf ? kNegInf : logk + lse3(prev(j), prev(j + 1), cur(j));
    }
    std::swap(prev, cur);
    prev(0) = kNegInf;
  }
  return prev(m);
}

double gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, const GakOptions& options) {
  return std::exp(log_gak(x, y, options));
}

double normalized_gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y,
                      const GakOptions& options) {
  const double lxy = log_gak(x, y, options);
  if (lxy == -std::numeric_limits<double>::infinity()) return 0.0;
  return std::exp(lxy - 0.5 * (log_gak(x, x, options) + log_gak(y, y, options)));
}

double gak_sigma_heuristic(const std::vector<Eigen::MatrixXd>& series, std::uint64_t seed) {
  if (series.empty()) {
    throw_invalid("gak_sigma_heuristic()", "no series");
  }
  Eigen::Index total = 0, dim = series.front().cols();
  std::vector<double> lengths;
  for (const auto& s : series) {
    if (s.rows() == 0 || s.cols() != dim) {
      throw_invalid(
          "gak_sigma_heuristic()",
          "every series must be non-empty with the same dimension (" + std::to_string(dim) + ")");
    }
    total += s.rows();
    lengths.push_back(static_cast<double>(s.rows()));
  }
  Eigen::MatrixXd pts(total, dim);
  Eigen::Index r = 0;
  for (const auto& s : series) {
    pts.middleRows(r, s.rows()) = s;
    r += s.rows();
  }
  const double med = median_heuristic_sigma(pts, seed, 1000);
  std::nth_element(lengths.begin(),
                   lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2),
                   lengths.end());
  return med * std::sqrt(lengths[lengths.size() / 2]);
}

// ---------------------------------------------------------------------------------------------

bool PositionKernel::trivial() const {
  return modality_coupling == 1.0 && std::isinf(time_sigma);
}

void PositionKernel::validate() const {
  if (!(modality_coupling >= 0.0 && modality_coupling <= 1.0)) {
    throw_invalid(
        "PositionKernel::validate()",
        "modality_coupling (" + format_number(modality_coupling, 12) + ") must be in [0, 1]");
  }
  if (!(time_sigma > 0.0)) {
    throw_invalid("PositionKernel::validate()", "time_sigma (" + format_number(time_sigma, 12) +
                                                    ") must be > 0 (+inf ignores time)");
  }
}

double PositionKernel::operator()(double c1, double t1, double c2, double t2) const {
  const double km = (c1 == c2) ? 1.0 : modality_coupling;
  if (std::isinf(time_sigma)) return km;
  const double dt = t1 - t2;
  return km * std::exp(-dt * dt / (2.0 * time_sigma * time_sigma));
}

void ProductKernel::validate() const {
  value.validate();
  position.validate();
}

double ProductKernel::operator()(const Eigen::Ref<const Eigen::VectorXd>& a, double ca, double ta,
                                 const Eigen::Ref<const Eigen::VectorXd>& b, double cb,
                                 double tb) const {
  return value(a, b) * position(ca, ta, cb, tb);
}

Eigen::MatrixXd cross_gram(const Eigen::MatrixXd& X, const Eigen::MatrixXd& PX,
                           const Eigen::MatrixXd& Y, const Eigen::MatrixXd& PY,
                           const ProductKernel& kernel) {
  kernel.validate();
  Eigen::MatrixXd G = cross_gram(X, Y, kernel.value);
  if (kernel.position.trivial()) return G;
  if (PX.rows() != X.rows() || PX.cols() != 2 || PY.rows() != Y.rows() || PY.cols() != 2) {
    throw_invalid("cross_gram()",
                  "positions must be (rows x 2: modality, time) for both sets when the "
                  "position kernel is not trivial (got " +
                      std::to_string(PX.rows()) + " x " + std::to_string(PX.cols()) + " and " +
                      std::to_string(PY.rows()) + " x " + std::to_string(PY.cols()) + ")");
  }
  const PositionKernel& pk = kernel.position;
#pragma omp parallel for schedule(static)
  for (Eigen::Index j = 0; j < G.cols(); ++j) {
    for (Eigen::Index i = 0; i < G.rows(); ++i)
      G(i, j) *= pk(PX(i, 0), PX(i, 1), PY(j, 0), PY(j, 1));
  }
  return G;
}

}  // namespace moca::kcca
