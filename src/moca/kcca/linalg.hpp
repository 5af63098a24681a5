#pragma once
/// \file linalg.hpp
/// Dense linear-algebra kernels used by the KCCA / CCA solvers: symmetric eigendecomposition,
/// thin SVD and the products X Xᵀ, Aᵀ B. They call LAPACK/BLAS (dsyevd, dgesdd, dsyrk, dgemm)
/// when moca::kcca was built with one (MOCA_KCCA_USE_LAPACK, found at configure time) and
/// Eigen's own solvers otherwise; results agree to rounding either way.
#include <Eigen/Core>
#include <vector>

namespace moca::kcca {

/// Eigendecomposition A = V diag(values) Vᵀ of a symmetric matrix.
struct SymmetricEigen {
  Eigen::VectorXd values;   ///< eigenvalues, descending
  Eigen::MatrixXd vectors;  ///< orthonormal eigenvectors, column i belongs to values(i)
};

/// Eigendecomposition of the symmetric matrix A (only its lower triangle is read), with
/// eigenvalues sorted in descending order. With `vectors` false only the values are computed
/// (about half the work; `vectors` is then 0 x 0). Throws std::invalid_argument if A is not square
/// and std::runtime_error if the solver fails.
SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& A, bool vectors = true);

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

/// Cholesky factorisation in place (LAPACK dpotrf when available): on success the lower
/// triangle of A holds L with A = L Lᵀ and the strictly upper part is unspecified (the original
/// entries; cholesky_solve_in_place reads only the lower triangle). Only the lower triangle of A
/// is read. Returns false (A then unspecified) if A is not numerically positive definite.
bool cholesky_lower_in_place(Eigen::MatrixXd& A);

/// y = A x for a symmetric A of which only the lower triangle is read (BLAS dsymv: multi-threaded
/// in OpenBLAS, unlike Eigen's product; docs/benchmarks.md). x and y must not overlap.
void symmetric_matvec_lower(const Eigen::MatrixXd& A, const double* x, double* y);

/// Solves (L Lᵀ) x = b in place for a Cholesky factor L from cholesky_lower or
/// cholesky_lower_in_place (only the lower triangle is read; BLAS dtrsv when available).
void cholesky_solve_in_place(const Eigen::MatrixXd& L, Eigen::Ref<Eigen::VectorXd> b);

/// Solves (L Lᵀ) X = B in place for every column of B (LAPACK dpotrs when available).
void cholesky_solve_in_place(const Eigen::MatrixXd& L, Eigen::MatrixXd& B);

/// B <- B L^{-T} for a lower-triangular nonsingular L (B has L.rows() columns).
void solve_right_lower_transpose(const Eigen::MatrixXd& L, Eigen::MatrixXd& B);

/// B <- L^{-T} B for a lower-triangular nonsingular L (B has L.rows() rows).
void solve_left_lower_transpose(const Eigen::MatrixXd& L, Eigen::MatrixXd& B);

/// Diagonally pivoted Cholesky factor of a symmetric positive semi-definite matrix (LAPACK
/// dpstrf when available): A ~ G Gᵀ with G n x r, r the number of pivots whose remaining diagonal
/// exceeded `tolerance` (absolute). Rows of G are in A's order; G restricted to its pivot rows, in
/// pivot order, is lower triangular. Cost O(n r^2), no eigendecomposition.
struct PivotedCholesky {
  Eigen::MatrixXd G;                  ///< n x r factor
  std::vector<Eigen::Index> pivots;   ///< the r pivot rows, in the order they were taken
  Eigen::VectorXd residual_diagonal;  ///< diag(A - G Gᵀ); >= -rounding for a PSD A
};

/// See PivotedCholesky. Throws std::invalid_argument if A is not square or tolerance < 0.
PivotedCholesky pivoted_cholesky(const Eigen::MatrixXd& A, double tolerance);

/// The symmetric product X Xᵀ (rows x rows), both triangles filled.
Eigen::MatrixXd outer_product(const Eigen::MatrixXd& X);

/// X Xᵀ with only the lower triangle written (the strictly upper part is unspecified): the
/// caller fills the upper one (e.g. gram(), which maps and mirrors in one pass). The buffer is
/// advised for huge pages before its first write.
Eigen::MatrixXd outer_product_lower(const Eigen::MatrixXd& X);

/// The symmetric product Xᵀ X (cols x cols), both triangles filled (dsyrk: half a dgemm).
Eigen::MatrixXd transpose_self_product(const Eigen::MatrixXd& X);

/// The product Aᵀ B.
Eigen::MatrixXd transpose_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/// The product A B.
Eigen::MatrixXd product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/// The product A Bᵀ.
Eigen::MatrixXd product_transpose(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

}  // namespace moca::kcca
