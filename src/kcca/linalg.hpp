#pragma once
/// \file linalg.hpp
/// Dense linear-algebra kernels used by the KCCA / CCA solvers: symmetric eigendecomposition,
/// thin SVD and the products X Xᵀ, Aᵀ B. They call LAPACK/BLAS (dsyevd, dgesdd, dsyrk, dgemm)
/// when moca::kcca was built with one (MOCA_KCCA_USE_LAPACK, found at configure time) and
/// Eigen's own solvers otherwise; results agree to rounding either way.
#include <Eigen/Core>

namespace moca::kcca {

/// Eigendecomposition A = V diag(values) Vᵀ of a symmetric matrix.
struct SymmetricEigen {
  Eigen::VectorXd values;   ///< eigenvalues, descending
  Eigen::MatrixXd vectors;  ///< orthonormal eigenvectors, column i belongs to values(i)
};

/// Full eigendecomposition of the symmetric matrix A (only its lower triangle is read), with
/// eigenvalues sorted in descending order. Throws std::invalid_argument if A is not square and
/// std::runtime_error if the solver fails.
SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& A);

/// Thin singular value decomposition A = U diag(values) Vᵀ.
struct ThinSvd {
  Eigen::VectorXd values;  ///< singular values, descending, min(rows, cols) of them
  Eigen::MatrixXd u;       ///< rows x min(rows, cols), orthonormal columns
  Eigen::MatrixXd v;       ///< cols x min(rows, cols), orthonormal columns
};

/// Thin SVD of A (divide and conquer). With `vectors` false only the values are computed.
/// Throws std::runtime_error if the solver fails.
ThinSvd thin_svd(const Eigen::MatrixXd& A, bool vectors = true);

/// Cholesky factor of a symmetric positive definite matrix: A = L Lᵀ with L lower triangular
/// (the strictly upper part of the returned matrix is 0). Returns false (and leaves L
/// unspecified) if A is not numerically positive definite.
bool cholesky_lower(const Eigen::MatrixXd& A, Eigen::MatrixXd& L);

/// Solves (L Lᵀ) x = b in place for a Cholesky factor L from cholesky_lower.
void cholesky_solve_in_place(const Eigen::MatrixXd& L, Eigen::Ref<Eigen::VectorXd> b);

/// The symmetric product X Xᵀ (rows x rows), both triangles filled.
Eigen::MatrixXd outer_product(const Eigen::MatrixXd& X);

/// The product Aᵀ B.
Eigen::MatrixXd transpose_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/// The product A B.
Eigen::MatrixXd product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/// The product A Bᵀ.
Eigen::MatrixXd product_transpose(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

}  // namespace moca::kcca
