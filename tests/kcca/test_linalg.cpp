#include "moca/kcca/linalg.hpp"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <set>

#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

TEST_CASE("linalg: pivoted Cholesky reproduces a PSD matrix and finds its rank") {
  // Rank 4 by construction: A = X Xᵀ with X 30 x 4.
  const Eigen::MatrixXd X = gaussian_matrix(30, 4, 1);
  const Eigen::MatrixXd A = X * X.transpose();
  const PivotedCholesky pc = pivoted_cholesky(A, 1e-10 * A.diagonal().maxCoeff());
  CHECK(pc.G.rows() == 30);
  CHECK(pc.G.cols() == 4);
  CHECK((A - pc.G * pc.G.transpose()).cwiseAbs().maxCoeff() < 1e-10 * A.cwiseAbs().maxCoeff());
  CHECK(pc.residual_diagonal.cwiseAbs().maxCoeff() < 1e-9);
  // Pivots are distinct; the pivot rows of G, in pivot order, are lower triangular, and the
  // first pivot is the largest diagonal entry.
  CHECK(std::set<Eigen::Index>(pc.pivots.begin(), pc.pivots.end()).size() == 4);
  Eigen::Index largest = 0;
  A.diagonal().maxCoeff(&largest);
  CHECK(pc.pivots[0] == largest);
  for (size_t i = 0; i < pc.pivots.size(); ++i) {
    for (Eigen::Index j = static_cast<Eigen::Index>(i) + 1; j < 4; ++j) {
      CHECK(pc.G(pc.pivots[i], j) == 0.0);
    }
  }
  // Full rank: exact factor; tolerance above the largest diagonal: rank 0.
  const Eigen::MatrixXd B = A + Eigen::MatrixXd::Identity(30, 30);
  const PivotedCholesky full = pivoted_cholesky(B, 0.0);
  CHECK(full.G.cols() == 30);
  CHECK((B - full.G * full.G.transpose()).cwiseAbs().maxCoeff() < 1e-10 * B.cwiseAbs().maxCoeff());
  CHECK(pivoted_cholesky(B, 2.0 * B.diagonal().maxCoeff()).G.cols() == 0);
  // An indefinite matrix leaves a negative residual diagonal.
  Eigen::Matrix2d C;
  C << 1, 2, 2, 1;
  CHECK(pivoted_cholesky(C, 1e-12).residual_diagonal.minCoeff() < -1.0);
  CHECK_THROWS_AS(pivoted_cholesky(Eigen::MatrixXd(3, 2), 0.0), std::invalid_argument);
  CHECK_THROWS_AS(pivoted_cholesky(B, -1.0), std::invalid_argument);
}

TEST_CASE("linalg: triangular solves, Cholesky solve, symmetric products and eigenvalues") {
  const Eigen::MatrixXd X = gaussian_matrix(40, 6, 2);
  const Eigen::MatrixXd S = X.transpose() * X + Eigen::MatrixXd::Identity(6, 6);
  Eigen::MatrixXd L;
  REQUIRE(cholesky_lower(S, L));
  const Eigen::MatrixXd B = gaussian_matrix(6, 3, 3);
  Eigen::MatrixXd Y = B;
  cholesky_solve_in_place(L, Y);
  CHECK((S * Y - B).norm() < 1e-10);
  Eigen::MatrixXd left = B;  // L^{-T} B
  solve_left_lower_transpose(L, left);
  CHECK((L.transpose() * left - B).norm() < 1e-10);
  Eigen::MatrixXd right = B.transpose();  // Bᵀ L^{-T}
  solve_right_lower_transpose(L, right);
  CHECK((right * L.transpose() - B.transpose()).norm() < 1e-10);
  CHECK((transpose_self_product(X) - X.transpose() * X).norm() < 1e-10);
  const SymmetricEigen full = symmetric_eigen(S), values = symmetric_eigen(S, false);
  CHECK(values.vectors.size() == 0);
  CHECK((full.values - values.values).norm() < 1e-10);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ref(S);
  CHECK((values.values - ref.eigenvalues().reverse()).norm() < 1e-10);
  Eigen::MatrixXd wrong = gaussian_matrix(5, 3, 4);
  CHECK_THROWS_AS(cholesky_solve_in_place(L, wrong), std::invalid_argument);
  CHECK_THROWS_AS(solve_left_lower_transpose(L, wrong), std::invalid_argument);
  CHECK_THROWS_AS(solve_right_lower_transpose(L, wrong), std::invalid_argument);
}
