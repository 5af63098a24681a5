#pragma once
/// \file kernels.hpp
/// Positive-definite kernels on vectors and time series, and their Gram matrices.
///
/// Convention: a data matrix holds one sample per row (n x d). Every Gram matrix returned here
/// is exactly symmetric.
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"

namespace moca::kcca {

/// The vector kernels.
enum class KernelType {
  kLinear,      ///< k(x, y) = <x, y>
  kGaussian,    ///< k(x, y) = exp(-|x - y|^2 / (2 sigma^2))
  kPolynomial,  ///< k(x, y) = (<x, y> + coef0)^degree
  kLaplacian,   ///< k(x, y) = exp(-|x - y| / sigma)  (Euclidean norm; the exponential kernel)
};

/// The kernels' names (first of a value: its name; later ones: accepted aliases).
inline constexpr EnumName<KernelType> kKernelTypeNames[] = {
    {KernelType::kLinear, "linear"},         {KernelType::kGaussian, "rbf"},
    {KernelType::kGaussian, "gaussian"},     {KernelType::kPolynomial, "poly"},
    {KernelType::kPolynomial, "polynomial"}, {KernelType::kLaplacian, "laplacian"}};

/// The canonical name: "linear", "rbf", "poly", "laplacian".
std::string kernel_type_name(KernelType type);

/// A vector kernel with its parameters. Construct with the factories or set fields directly.
struct Kernel {
  KernelType type = KernelType::kGaussian;  ///< which kernel
  double sigma = 1.0;  ///< bandwidth of the Gaussian and Laplacian kernels; finite, > 0
  int degree = 2;      ///< polynomial degree; >= 1
  double coef0 = 1.0;  ///< polynomial offset; finite, >= 0 (keeps the kernel PSD)

  static Kernel linear();
  static Kernel gaussian(double sigma);
  static Kernel polynomial(int degree, double coef0 = 1.0);
  static Kernel laplacian(double sigma);

  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;

  /// k(a, b) for two vectors of equal length.
  double operator()(const Eigen::Ref<const Eigen::VectorXd>& a,
                    const Eigen::Ref<const Eigen::VectorXd>& b) const;

  /// k(x, x) as a function of |x|^2 (1 for the stationary kernels).
  double diagonal(double squared_norm) const;

  /// A one-line description, e.g. "rbf(sigma=0.5)".
  std::string describe() const;
};

/// The n x n Gram matrix K_ij = k(x_i, x_j) of the rows of X (n x d). Distances for the Gaussian
/// and Laplacian kernels come from one product X Xᵀ (|x|^2 + |y|^2 - 2 <x, y>, clamped at 0,
/// diagonal exactly 0), the element-wise map runs in parallel (OpenMP). O(n^2 d).
/// Throws std::invalid_argument for an invalid kernel or non-finite data.
Eigen::MatrixXd gram(const Eigen::MatrixXd& X, const Kernel& kernel);

/// The m x n cross Gram K_ij = k(x_i, y_j) of the rows of X (m x d) and Y (n x d).
Eigen::MatrixXd cross_gram(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y,
                           const Kernel& kernel);

/// Median-distance bandwidth: the median of the Euclidean distances |x_i - x_j| (i < j) over at
/// most `max_samples` rows drawn without replacement (seeded) — the usual choice of sigma for
/// the Gaussian kernel. Throws std::invalid_argument if X has fewer than 2 rows, max_samples < 2,
/// or every sampled distance is 0 (constant data has no bandwidth).
double median_heuristic_sigma(const Eigen::MatrixXd& X, std::uint64_t seed, int max_samples = 1000);

// ---------------------------------------------------------------------------------------------
// Global alignment kernel (Cuturi 2007/2011) for time series.

/// Options of the global alignment kernel.
struct GakOptions {
  double sigma = 1.0;  ///< bandwidth of the local Gaussian; finite, > 0
  /// Triangular constraint T: alignments may only pair times with |i - j| < T, weighted by
  /// (1 - |i - j| / T); 0 (default) = no constraint. T >= 0. With T > 0 and series lengths that
  /// differ by T or more the kernel is 0 (log kernel -inf).
  int triangular = 0;
  void validate() const;
};

/// log k_GA(x, y) for series x (|x| x d) and y (|y| x d), rows = time steps:
/// k_GA = sum over alignments of prod k~(x_i, y_j), computed by the recursion
/// M[i, j] = (M[i-1, j] + M[i, j-1] + M[i-1, j-1]) k~(x_i, y_j) entirely in log space (no
/// overflow for long series), with k~ = e^{-phi}, phi = d^2 / (2 sigma^2) + log(2 - e^{-d^2 /
/// (2 sigma^2)}). O(|x| |y| d). Throws std::invalid_argument for empty series or a dimension
/// mismatch.
double log_gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, const GakOptions& options);

/// exp(log_gak(x, y)) (may overflow to +inf for long series; use log_gak or normalized_gak).
double gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, const GakOptions& options);

/// Normalised GAK: exp(log k(x,y) - (log k(x,x) + log k(y,y)) / 2), in [0, 1].
double normalized_gak(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y,
                      const GakOptions& options);

/// Cuturi's bandwidth rule: median distance between time points of the series times
/// sqrt(median length). `series` holds the series; each is time x d.
double gak_sigma_heuristic(const std::vector<Eigen::MatrixXd>& series, std::uint64_t seed);

// ---------------------------------------------------------------------------------------------
// Position-aware product kernel for patches.

/// A kernel on patch positions (modality c, time t):
/// k_pos((c, t), (c', t')) = [(1 - coupling) delta_{c c'} + coupling] * exp(-(t - t')^2 /
/// (2 time_sigma^2)). Both factors are PSD, so the product is. The defaults (coupling 1,
/// time_sigma +inf) give k_pos = 1, i.e. positions are ignored.
struct PositionKernel {
  /// Similarity of patches on different modalities, in [0, 1] (1 = modality ignored,
  /// 0 = only patches of the same modality interact). Default 1.
  double modality_coupling = 1.0;
  /// Bandwidth over time positions (in patch units); > 0, +inf (default) = time ignored.
  double time_sigma = std::numeric_limits<double>::infinity();
  /// True when k_pos == 1 for all positions.
  bool trivial() const;
  void validate() const;
  double operator()(double c1, double t1, double c2, double t2) const;
};

/// The product kernel k((x, p), (y, q)) = k_value(x, y) * k_pos(p, q) of a value kernel on patch
/// contents and a position kernel on (modality, time) positions; PSD as a product of PSD kernels.
struct ProductKernel {
  Kernel value;             ///< kernel on patch values
  PositionKernel position;  ///< kernel on positions (default: ignored)
  void validate() const;
  double operator()(const Eigen::Ref<const Eigen::VectorXd>& a, double ca, double ta,
                    const Eigen::Ref<const Eigen::VectorXd>& b, double cb, double tb) const;
};

/// Cross Gram of the product kernel: rows of X with positions PX (m x 2: modality, time) against
/// rows of Y with positions PY (n x 2). PX / PY may be empty (0 rows) when the position kernel is
/// trivial.
Eigen::MatrixXd cross_gram(const Eigen::MatrixXd& X, const Eigen::MatrixXd& PX,
                           const Eigen::MatrixXd& Y, const Eigen::MatrixXd& PY,
                           const ProductKernel& kernel);

}  // namespace moca::kcca
