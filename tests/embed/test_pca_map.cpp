#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/embed/pca_map.hpp"

using namespace moca;

TEST_CASE("pca_layout: the first two principal scores (SVD as the reference)") {
  Rng rng(2);
  Eigen::MatrixXd x(80, 6);
  const Eigen::VectorXd scale = (Eigen::VectorXd(6) << 9, 5, 2, 1, 0.5, 0.2).finished();
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index d = 0; d < 6; ++d) x(i, d) = scale(d) * standard_normal(rng) + 3.0;
  const Eigen::MatrixXd y = embed::pca_layout(x, 2);
  const Eigen::MatrixXd c = x.rowwise() - x.colwise().mean();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(c, Eigen::ComputeThinU | Eigen::ComputeThinV);
  for (int k = 0; k < 2; ++k) {
    Eigen::VectorXd ref = svd.matrixU().col(k) * svd.singularValues()(k);
    Eigen::Index top = 0;
    svd.matrixV().col(k).cwiseAbs().maxCoeff(&top);
    if (svd.matrixV()(top, k) < 0) ref = -ref;  // the documented sign rule
    CHECK((y.col(k) - ref).norm() <= 1e-9 * ref.norm());
  }
  CHECK_THROWS_AS(embed::pca_layout(x.topRows(1), 2), std::invalid_argument);
  CHECK_THROWS_AS(embed::pca_layout(x, 7), std::invalid_argument);
}
