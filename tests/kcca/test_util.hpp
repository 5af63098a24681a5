#pragma once
// Shared helpers of the kcca test suite: seeded Gaussian matrices and dense reference solvers
// written independently of the library code (plain Eigen, textbook formulas).
#include <Eigen/Dense>
#include <cstdint>

#include "moca/common/random.hpp"

namespace moca::kcca::test {

inline Eigen::MatrixXd gaussian_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  Rng rng(seed);
  Eigen::MatrixXd A(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < rows; ++i) A(i, j) = standard_normal(rng);
  }
  return A;
}

// Inverse square root of a symmetric positive definite matrix.
inline Eigen::MatrixXd inv_sqrt(const Eigen::MatrixXd& S) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S);
  return es.eigenvectors() * es.eigenvalues().cwiseSqrt().cwiseInverse().asDiagonal() *
         es.eigenvectors().transpose();
}

// Textbook CCA: singular values of S_uu^{-1/2} S_um S_mm^{-1/2} of centred data (+ ridge).
inline Eigen::VectorXd reference_cca(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M,
                                     double ridge = 0.0) {
  const Eigen::MatrixXd Uc = U.rowwise() - U.colwise().mean();
  const Eigen::MatrixXd Mc = M.rowwise() - M.colwise().mean();
  const Eigen::MatrixXd Suu =
      Uc.transpose() * Uc + ridge * Eigen::MatrixXd::Identity(U.cols(), U.cols());
  const Eigen::MatrixXd Smm =
      Mc.transpose() * Mc + ridge * Eigen::MatrixXd::Identity(M.cols(), M.cols());
  const Eigen::MatrixXd G = inv_sqrt(Suu) * (Uc.transpose() * Mc) * inv_sqrt(Smm);
  return Eigen::JacobiSVD<Eigen::MatrixXd>(G).singularValues();
}

}  // namespace moca::kcca::test
