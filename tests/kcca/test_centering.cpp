#include "moca/kcca/centering.hpp"

#include <doctest/doctest.h>

#include "moca/kcca/kernels.hpp"
#include "moca/kcca/linalg.hpp"
#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

TEST_CASE("center_gram equals H K H and the Gram of centred features") {
  for (int n : {2, 7, 50}) {
    const Eigen::MatrixXd X = gaussian_matrix(n, 3, n);
    const Eigen::MatrixXd K = gram(X, Kernel::gaussian(1.0));
    const Eigen::MatrixXd H =
        Eigen::MatrixXd::Identity(n, n) - Eigen::MatrixXd::Constant(n, n, 1.0 / n);
    CHECK((center_gram(K) - H * K * H).cwiseAbs().maxCoeff() < 1e-12);
    const Eigen::MatrixXd Xc = X.rowwise() - X.colwise().mean();
    CHECK((center_gram(gram(X, Kernel::linear())) - Xc * Xc.transpose()).cwiseAbs().maxCoeff() <
          1e-12);
  }
  // Out of sample: centring test rows with the training statistics.
  const Eigen::MatrixXd X = gaussian_matrix(20, 2, 3), T = gaussian_matrix(5, 2, 4);
  const Eigen::Vector2d mu = X.colwise().mean();
  const Eigen::MatrixXd expect =
      (T.rowwise() - mu.transpose()) * (X.rowwise() - mu.transpose()).transpose();
  const Eigen::MatrixXd got =
      center_cross_gram(cross_gram(T, X, Kernel::linear()), gram(X, Kernel::linear()));
  CHECK((got - expect).cwiseAbs().maxCoeff() < 1e-12);
  CHECK_THROWS_AS(center_gram(Eigen::MatrixXd(2, 3)), std::invalid_argument);
  CHECK_THROWS_AS(center_cross_gram(Eigen::MatrixXd(2, 3), Eigen::MatrixXd(4, 4)),
                  std::invalid_argument);
}

TEST_CASE("linalg: eigen, SVD and products against Eigen's own") {
  const Eigen::MatrixXd A = gaussian_matrix(40, 30, 1);
  const Eigen::MatrixXd S = A * A.transpose();
  const SymmetricEigen e = symmetric_eigen(S);
  CHECK((S * e.vectors - e.vectors * e.values.asDiagonal()).norm() < 1e-9 * e.values(0));
  for (Eigen::Index i = 1; i < e.values.size(); ++i) CHECK(e.values(i - 1) >= e.values(i));
  const ThinSvd s = thin_svd(A);
  CHECK((s.u * s.values.asDiagonal() * s.v.transpose() - A).norm() < 1e-10);
  CHECK((thin_svd(A, false).values - s.values).norm() < 1e-10);
  const Eigen::MatrixXd B = gaussian_matrix(40, 7, 2);
  CHECK((outer_product(A) - S).norm() < 1e-10);
  CHECK((transpose_product(A, B) - A.transpose() * B).norm() < 1e-10);
  CHECK((product_transpose(B.transpose(), A.transpose()) - B.transpose() * A).norm() < 1e-10);
  CHECK((product(A.transpose(), B) - A.transpose() * B).norm() < 1e-10);
  CHECK_THROWS_AS(symmetric_eigen(A), std::invalid_argument);
  CHECK_THROWS_AS(transpose_product(A, B.topRows(3)), std::invalid_argument);
  CHECK_THROWS_AS(product(A, B), std::invalid_argument);
}
