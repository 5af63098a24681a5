#pragma once
/// \file operator_kernel.hpp
/// Separable operator-valued kernels (paper, "RKHS representations", d >= 1): for inputs x, y
/// the kernel returns the d x d matrix k(x, y) B with a scalar kernel k and a fixed symmetric
/// PSD B. The block Gram (nd x nd) has (i, j) block K_ij B, i.e. K ⊗ B (Kronecker product), and
/// is PSD because K and B are.
#include <Eigen/Core>

#include "moca/kcca/kernels.hpp"

namespace moca::kcca {

/// Throws std::invalid_argument unless B is square, non-empty, finite, symmetric (to 1e-10
/// relative) and PSD (smallest eigenvalue >= -1e-10 * largest |eigenvalue|). `what` prefixes the
/// message.
void validate_psd(const Eigen::MatrixXd& B, const char* what);

/// A separable operator-valued kernel K(x, y) = k(x, y) B.
struct OperatorKernel {
  Kernel scalar;          ///< scalar kernel k
  Eigen::MatrixXd B;      ///< d x d symmetric PSD output covariance (d >= 1)
  void validate() const;  ///< validates both parts
  Eigen::Index dimension() const { return B.rows(); }  ///< d
  /// The d x d value k(a, b) B.
  Eigen::MatrixXd operator()(const Eigen::Ref<const Eigen::VectorXd>& a,
                             const Eigen::Ref<const Eigen::VectorXd>& b) const;
};

/// The block Gram K ⊗ B (nd x nd; block (i, j) = K_ij B) of a scalar Gram K (n x n) and B.
Eigen::MatrixXd block_gram(const Eigen::MatrixXd& K, const Eigen::MatrixXd& B);

/// The block Gram of the rows of X under an operator-valued kernel: gram(X, k) ⊗ B.
Eigen::MatrixXd operator_gram(const Eigen::MatrixXd& X, const OperatorKernel& kernel);

}  // namespace moca::kcca
