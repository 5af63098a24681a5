#include "moca/kcca/operator_kernel.hpp"

#include <doctest/doctest.h>

#include "moca/kcca/kcca.hpp"
#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

TEST_CASE("operator kernel: block Gram is K ⊗ B and PSD") {
  const Eigen::MatrixXd X = gaussian_matrix(6, 2, 1);
  Eigen::MatrixXd B(2, 2);
  B << 2.0, 0.5, 0.5, 1.0;
  OperatorKernel ok{Kernel::gaussian(1.0), B};
  const Eigen::MatrixXd G = operator_gram(X, ok);
  const Eigen::MatrixXd K = gram(X, ok.scalar);
  CHECK(G.rows() == 12);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      CHECK((G.block(2 * i, 2 * j, 2, 2) - K(i, j) * B).cwiseAbs().maxCoeff() < 1e-15);
      CHECK((ok(X.row(i).transpose(), X.row(j).transpose()) - K(i, j) * B).norm() < 1e-14);
    }
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
  CHECK(es.eigenvalues().minCoeff() > -1e-12);
  // Eigenvalues of a Kronecker product are the products of eigenvalues.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ek(K), eb(B);
  CHECK(std::abs(es.eigenvalues().maxCoeff() -
                 ek.eigenvalues().maxCoeff() * eb.eigenvalues().maxCoeff()) < 1e-10);
}

TEST_CASE("operator kernel: KCCA with B = I_d repeats each scalar correlation d times") {
  const Eigen::MatrixXd X = gaussian_matrix(15, 2, 2), Y = gaussian_matrix(15, 2, 3) + X;
  const Eigen::MatrixXd Ku = gram(X, Kernel::gaussian(1.0)), Km = gram(Y, Kernel::gaussian(1.5));
  KccaOptions o;
  o.center = false;
  o.components = 2;
  const KccaResult scalar = kcca(Ku, Km, o);
  const Eigen::MatrixXd I3 = Eigen::MatrixXd::Identity(3, 3);
  o.components = 6;
  const KccaResult block = kcca(block_gram(Ku, I3), block_gram(Km, I3), o);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::abs(block.correlations(i) - scalar.correlations(0)) < 1e-9);
    CHECK(std::abs(block.correlations(3 + i) - scalar.correlations(1)) < 1e-9);
  }
}

TEST_CASE("operator kernel: error paths") {
  Eigen::MatrixXd notsym(2, 2);
  notsym << 1, 2, 0, 1;
  CHECK_THROWS_AS(validate_psd(notsym, "t"), std::invalid_argument);
  Eigen::MatrixXd indef(2, 2);
  indef << 1, 2, 2, 1;
  CHECK_THROWS_AS(validate_psd(indef, "t"), std::invalid_argument);
  CHECK_THROWS_AS(validate_psd(Eigen::MatrixXd(2, 3), "t"), std::invalid_argument);
  CHECK_THROWS_AS(validate_psd(Eigen::MatrixXd(), "t"), std::invalid_argument);
  Eigen::MatrixXd nan = Eigen::MatrixXd::Identity(2, 2);
  nan(0, 0) = NAN;
  CHECK_THROWS_AS(validate_psd(nan, "t"), std::invalid_argument);
  CHECK_NOTHROW(validate_psd(Eigen::MatrixXd::Zero(2, 2), "t"));
  CHECK_THROWS_AS(block_gram(Eigen::MatrixXd(2, 3), Eigen::MatrixXd::Identity(2, 2)),
                  std::invalid_argument);
  OperatorKernel ok{Kernel::gaussian(-1.0), Eigen::MatrixXd::Identity(2, 2)};
  CHECK_THROWS_AS(ok.validate(), std::invalid_argument);
}
