#include "moca/kcca/linalg.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/memory.hpp"

#ifdef MOCA_KCCA_HAVE_LAPACK
// LAPACKE and CBLAS, not hand declarations of the Fortran symbols: these pass the hidden
// string-length arguments that gfortran-built LAPACKs expect after the character arguments
// (leaving them out is undefined behaviour, the bug class R's FCONE fixes). Column-major calls
// go straight to the same Fortran routines, so results are those of the routines themselves.
#include <cblas.h>

#include <complex>
#define LAPACK_COMPLEX_CPP  // LAPACKE's complex types as std::complex: ISO C++ has no _Complex
#include <lapacke.h>
#endif

namespace moca::kcca {

namespace {

[[maybe_unused]] int checked_int(Eigen::Index v, const char* what) {
  if (v > static_cast<Eigen::Index>(2147483647)) {
    throw_invalid("", std::string(what) + ": dimension (" + std::to_string(v) +
                          ") exceeds the LAPACK index range");
  }
  return static_cast<int>(v);
}

}  // namespace

SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& A, bool vectors) {
  if (A.rows() != A.cols()) {
    throw_invalid("symmetric_eigen()", "matrix is " + std::to_string(A.rows()) + " x " +
                                           std::to_string(A.cols()) + " (must be square)");
  }
  SymmetricEigen out;
  const Eigen::Index n = A.rows();
  if (n == 0) return out;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int ni = checked_int(n, "symmetric_eigen()");
  Eigen::MatrixXd a = A;
  Eigen::VectorXd w(n);
  int lwork = -1, liwork = -1, info = 0;
  double wq = 0;
  int iwq = 0;
  const char jobz = vectors ? 'V' : 'N';
  info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'L', ni, a.data(), ni, w.data(), &wq, lwork,
                             &iwq, liwork);
  if (info == 0) {
    lwork = static_cast<int>(wq) + 1;
    liwork = iwq;
    std::vector<double> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'L', ni, a.data(), ni, w.data(), work.data(),
                               lwork, iwork.data(), liwork);
  }
  if (info != 0) {
    throw std::runtime_error("symmetric_eigen(): LAPACK dsyevd failed (info " +
                             std::to_string(info) + ")");
  }
  out.values = w.reverse();
  if (vectors) out.vectors = a.rowwise().reverse();
#else
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(
      A, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) {
    throw std::runtime_error("symmetric_eigen(): Eigen's eigensolver did not converge");
  }
  out.values = es.eigenvalues().reverse();
  if (vectors) out.vectors = es.eigenvectors().rowwise().reverse();
#endif
  return out;
}

ThinSvd thin_svd(const Eigen::MatrixXd& A, bool vectors) {
  ThinSvd out;
  const Eigen::Index m = A.rows(), n = A.cols(), k = std::min(m, n);
  if (k == 0) {
    out.u.resize(m, 0);
    out.v.resize(n, 0);
    return out;
  }
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int mi = checked_int(m, "thin_svd()"), ni = checked_int(n, "thin_svd()");
  const int ki = static_cast<int>(k);
  Eigen::MatrixXd a = A;
  out.values.resize(k);
  Eigen::MatrixXd u(vectors ? m : 1, vectors ? k : 1), vt(vectors ? k : 1, vectors ? n : 1);
  const char jobz = vectors ? 'S' : 'N';
  const int ldu = vectors ? mi : 1, ldvt = vectors ? ki : 1;
  std::vector<int> iwork(static_cast<size_t>(8 * k));
  int lwork = -1, info = 0;
  double wq = 0;
  info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, mi, ni, a.data(), mi, out.values.data(),
                             u.data(), ldu, vt.data(), ldvt, &wq, lwork, iwork.data());
  if (info == 0) {
    lwork = static_cast<int>(wq) + 1;
    std::vector<double> work(static_cast<size_t>(lwork));
    info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, mi, ni, a.data(), mi, out.values.data(),
                               u.data(), ldu, vt.data(), ldvt, work.data(), lwork, iwork.data());
  }
  if (info != 0) {
    throw std::runtime_error("thin_svd(): LAPACK dgesdd failed (info " + std::to_string(info) +
                             ")");
  }
  if (vectors) {
    out.u = std::move(u);
    out.v = vt.transpose();
  }
#else
  if (vectors) {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeThinU | Eigen::ComputeThinV);
    out.values = svd.singularValues();
    out.u = svd.matrixU();
    out.v = svd.matrixV();
  } else {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(A);
    out.values = svd.singularValues();
  }
#endif
  return out;
}

bool cholesky_lower(const Eigen::MatrixXd& A, Eigen::MatrixXd& L) {
  if (A.rows() != A.cols()) {
    throw_invalid("cholesky_lower()", "matrix is " + std::to_string(A.rows()) + " x " +
                                          std::to_string(A.cols()) + " (must be square)");
  }
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int n = checked_int(A.rows(), "cholesky_lower()");
  L = A;
  if (n == 0) return true;
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, L.data(), n) != 0) return false;
  L.triangularView<Eigen::StrictlyUpper>().setZero();
  return true;
#else
  Eigen::LLT<Eigen::MatrixXd> llt(A);
  if (llt.info() != Eigen::Success) return false;
  L = llt.matrixL();
  return true;
#endif
}

bool cholesky_lower_in_place(Eigen::MatrixXd& A) {
  if (A.rows() != A.cols()) {
    throw_invalid("cholesky_lower_in_place()", "matrix is " + std::to_string(A.rows()) + " x " +
                                                   std::to_string(A.cols()) + " (must be square)");
  }
  if (A.rows() == 0) return true;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int n = checked_int(A.rows(), "cholesky_lower_in_place()");
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A.data(), n) == 0;
#else
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd> > llt(A);  // in place, reads the lower triangle
  return llt.info() == Eigen::Success;
#endif
}

void symmetric_matvec_lower(const Eigen::MatrixXd& A, const double* x, double* y) {
  const Eigen::Index n = A.rows();
  if (A.cols() != n) {
    throw_invalid("symmetric_matvec_lower()", "matrix is " + std::to_string(n) + " x " +
                                                  std::to_string(A.cols()) + " (must be square)");
  }
  if (n == 0) return;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int ni = checked_int(n, "symmetric_matvec_lower()");
  cblas_dsymv(CblasColMajor, CblasLower, ni, 1.0, A.data(), ni, x, 1, 0.0, y, 1);
#else
  Eigen::Map<Eigen::VectorXd> out(y, n);
  out.noalias() = A.selfadjointView<Eigen::Lower>() * Eigen::Map<const Eigen::VectorXd>(x, n);
#endif
}

void cholesky_solve_in_place(const Eigen::MatrixXd& L, Eigen::Ref<Eigen::VectorXd> b) {
  if (b.size() != L.rows()) {
    throw_invalid("cholesky_solve_in_place()", "right-hand side has " + std::to_string(b.size()) +
                                                   " rows, factor " + std::to_string(L.rows()));
  }
  if (b.size() == 0) return;
#ifdef MOCA_KCCA_HAVE_LAPACK
  // OpenBLAS's dtrsv, faster than Eigen's triangular solve (docs/benchmarks.md).
  const int n = checked_int(L.rows(), "cholesky_solve_in_place()");
  cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L.data(), n, b.data(), 1);
  cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, L.data(), n, b.data(), 1);
#else
  L.triangularView<Eigen::Lower>().solveInPlace(b);
  L.transpose().triangularView<Eigen::Upper>().solveInPlace(b);
#endif
}

void cholesky_solve_in_place(const Eigen::MatrixXd& L, Eigen::MatrixXd& B) {
  if (B.rows() != L.rows()) {
    throw_invalid("cholesky_solve_in_place()", "right-hand side has " + std::to_string(B.rows()) +
                                                   " rows, factor " + std::to_string(L.rows()));
  }
  if (B.size() == 0) return;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int n = checked_int(L.rows(), "cholesky_solve_in_place()");
  const int nrhs = checked_int(B.cols(), "cholesky_solve_in_place()");
  const int info = LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, nrhs, L.data(), n, B.data(), n);
  if (info != 0) {
    throw std::runtime_error("cholesky_solve_in_place(): LAPACK dpotrs failed (info " +
                             std::to_string(info) + ")");
  }
#else
  L.triangularView<Eigen::Lower>().solveInPlace(B);
  L.transpose().triangularView<Eigen::Upper>().solveInPlace(B);
#endif
}

void solve_right_lower_transpose(const Eigen::MatrixXd& L, Eigen::MatrixXd& B) {
  if (B.cols() != L.rows() || L.rows() != L.cols()) {
    throw_invalid("solve_right_lower_transpose()",
                  "B has " + std::to_string(B.cols()) + " columns, L is " +
                      std::to_string(L.rows()) + " x " + std::to_string(L.cols()));
  }
  if (B.size() == 0) return;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int m = checked_int(B.rows(), "solve_right_lower_transpose()");
  const int n = checked_int(B.cols(), "solve_right_lower_transpose()");
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, L.data(),
              n, B.data(), m);
#else
  // B L^{-T} = (L^{-1} Bᵀ)ᵀ.
  Eigen::MatrixXd Bt = B.transpose();
  L.triangularView<Eigen::Lower>().solveInPlace(Bt);
  B = Bt.transpose();
#endif
}

void solve_left_lower_transpose(const Eigen::MatrixXd& L, Eigen::MatrixXd& B) {
  if (B.rows() != L.rows() || L.rows() != L.cols()) {
    throw_invalid("solve_left_lower_transpose()", "B has " + std::to_string(B.rows()) +
                                                      " rows, L is " + std::to_string(L.rows()) +
                                                      " x " + std::to_string(L.cols()));
  }
  if (B.size() == 0) return;
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int m = checked_int(B.rows(), "solve_left_lower_transpose()");
  const int n = checked_int(B.cols(), "solve_left_lower_transpose()");
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, L.data(),
              m, B.data(), m);
#else
  L.transpose().triangularView<Eigen::Upper>().solveInPlace(B);
#endif
}

PivotedCholesky pivoted_cholesky(const Eigen::MatrixXd& A, double tolerance) {
  if (A.rows() != A.cols()) {
    throw_invalid("pivoted_cholesky()", "matrix is " + std::to_string(A.rows()) + " x " +
                                            std::to_string(A.cols()) + " (must be square)");
  }
  if (!(tolerance >= 0.0)) {
    throw_invalid("pivoted_cholesky()", "tolerance must be >= 0");
  }
  const Eigen::Index n = A.rows();
  PivotedCholesky out;
  if (n == 0) {
    out.G.resize(0, 0);
    return out;
  }
  if (!(A.diagonal().maxCoeff() > tolerance)) {  // dpstrf would still take the first pivot
    out.G.resize(n, 0);
    out.residual_diagonal = A.diagonal();
    return out;
  }
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int ni = checked_int(n, "pivoted_cholesky()");
  Eigen::MatrixXd a = A;
  std::vector<int> piv(static_cast<size_t>(n));
  std::vector<double> work(static_cast<size_t>(2 * n));
  int rank = 0;
  // dpstrf stops at a pivot <= tol; a tolerance of exactly 0 would let it run into rounding noise
  // (and LAPACK reads tol < 0 as "default"), so 0 means the smallest positive double.
  const double tol = std::max(tolerance, std::numeric_limits<double>::min());
  const int info = LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', ni, a.data(), ni, piv.data(), &rank,
                                       tol, work.data());
  if (info < 0) {
    throw std::runtime_error("pivoted_cholesky(): LAPACK dpstrf failed (info " +
                             std::to_string(info) + ")");
  }
  out.G = Eigen::MatrixXd::Zero(n, rank);
  for (int j = 0; j < rank; ++j) out.pivots.push_back(piv[static_cast<size_t>(j)] - 1);
  for (Eigen::Index j = 0; j < rank; ++j) {
    for (Eigen::Index i = j; i < n; ++i) out.G(piv[static_cast<size_t>(i)] - 1, j) = a(i, j);
  }
#else
  // Left-looking: column j = (A(:, p) - G(:, :j) G(p, :j)ᵀ) / sqrt(d_p) at the largest remaining
  // diagonal d_p.
  Eigen::VectorXd d = A.diagonal();
  Eigen::MatrixXd G(n, n);
  Eigen::Index r = 0;
  for (; r < n; ++r) {
    Eigen::Index p = 0;
    const double dp = d.maxCoeff(&p);
    if (!(dp > tolerance)) break;
    Eigen::VectorXd col = A.col(p);
    if (r > 0) col.noalias() -= G.leftCols(r) * G.row(p).head(r).transpose();
    G.col(r) = col / std::sqrt(dp);
    for (const Eigen::Index q : out.pivots) G(q, r) = 0.0;  // exact zeros above the diagonal
    G(p, r) = std::sqrt(dp);
    d -= G.col(r).cwiseAbs2();
    d(p) = 0.0;
    out.pivots.push_back(p);
  }
  out.G = G.leftCols(r);
#endif
  out.residual_diagonal = A.diagonal() - out.G.rowwise().squaredNorm();
  return out;
}

Eigen::MatrixXd outer_product_lower(const Eigen::MatrixXd& X) {
  const Eigen::Index n = X.rows();
  Eigen::MatrixXd C(n, n);
  if (n == 0) return C;
  advise_huge_pages(C.data(), static_cast<std::size_t>(C.size()) * sizeof(double));
  if (X.cols() == 0) {
    C.setZero();
    return C;
  }
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int ni = checked_int(n, "outer_product()"), ki = checked_int(X.cols(), "outer_product()");
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, ni, ki, 1.0, X.data(), ni, 0.0, C.data(),
              ni);
#else
  C.setZero();
  C.selfadjointView<Eigen::Lower>().rankUpdate(X);
#endif
  return C;
}

Eigen::MatrixXd outer_product(const Eigen::MatrixXd& X) {
  Eigen::MatrixXd C = outer_product_lower(X);
  C.triangularView<Eigen::StrictlyUpper>() = C.transpose();
  return C;
}

Eigen::MatrixXd transpose_self_product(const Eigen::MatrixXd& X) {
  const Eigen::Index n = X.cols();
  Eigen::MatrixXd C(n, n);
  if (n == 0) return C;
  if (X.rows() == 0) return Eigen::MatrixXd::Zero(n, n);
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int ni = checked_int(n, "transpose_self_product()");
  const int ki = checked_int(X.rows(), "transpose_self_product()");
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, ni, ki, 1.0, X.data(), ki, 0.0, C.data(), ni);
  C.triangularView<Eigen::StrictlyUpper>() = C.transpose();
#else
  C.setZero();
  C.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  C.triangularView<Eigen::StrictlyUpper>() = C.transpose();
#endif
  return C;
}

Eigen::MatrixXd transpose_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  if (A.rows() != B.rows()) {
    throw_invalid("transpose_product()", "row counts differ (" + std::to_string(A.rows()) + " vs " +
                                             std::to_string(B.rows()) + ")");
  }
  Eigen::MatrixXd C(A.cols(), B.cols());
  if (C.size() == 0) return C;
  if (A.rows() == 0) return Eigen::MatrixXd::Zero(A.cols(), B.cols());
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int m = checked_int(A.cols(), "transpose_product()");
  const int n = checked_int(B.cols(), "transpose_product()");
  const int k = checked_int(A.rows(), "transpose_product()");
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0, A.data(), k, B.data(), k, 0.0,
              C.data(), m);
#else
  C.noalias() = A.transpose() * B;
#endif
  return C;
}

Eigen::MatrixXd product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  if (A.cols() != B.rows()) {
    throw_invalid("product()", "inner dimensions differ (" + std::to_string(A.cols()) + " vs " +
                                   std::to_string(B.rows()) + ")");
  }
  Eigen::MatrixXd C(A.rows(), B.cols());
  if (C.size() == 0) return C;
  if (A.cols() == 0) return Eigen::MatrixXd::Zero(A.rows(), B.cols());
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int m = checked_int(A.rows(), "product()");
  const int n = checked_int(B.cols(), "product()");
  const int k = checked_int(A.cols(), "product()");
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A.data(), m, B.data(), k,
              0.0, C.data(), m);
#else
  C.noalias() = A * B;
#endif
  return C;
}

Eigen::MatrixXd product_transpose(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  if (A.cols() != B.cols()) {
    throw_invalid("product_transpose()", "column counts differ (" + std::to_string(A.cols()) +
                                             " vs " + std::to_string(B.cols()) + ")");
  }
  Eigen::MatrixXd C(A.rows(), B.rows());
  if (C.size() == 0) return C;
  if (A.cols() == 0) return Eigen::MatrixXd::Zero(A.rows(), B.rows());
#ifdef MOCA_KCCA_HAVE_LAPACK
  const int m = checked_int(A.rows(), "product_transpose()");
  const int n = checked_int(B.rows(), "product_transpose()");
  const int k = checked_int(A.cols(), "product_transpose()");
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, A.data(), m, B.data(), n, 0.0,
              C.data(), m);
#else
  C.noalias() = A * B.transpose();
#endif
  return C;
}

}  // namespace moca::kcca
