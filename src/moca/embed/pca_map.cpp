#include "moca/embed/pca_map.hpp"

#include <Eigen/Eigenvalues>
#include <string>

#include "moca/common/error_text.hpp"

namespace moca::embed {

Eigen::MatrixXd pca_layout(const Eigen::MatrixXd& x, int dims) {
  if (x.rows() < 2)
    throw_invalid("pca_layout()", "points", std::to_string(x.rows()), "must be >= 2");
  if (dims < 1 || dims > x.cols()) {
    throw_invalid("pca_layout()", "dims", std::to_string(dims),
                  "must be in [1, " + std::to_string(x.cols()) + "] (the data's dimension)");
  }
  if (!x.allFinite()) throw_invalid("pca_layout()", "the points contain NaN or Inf");
  const Eigen::MatrixXd centred = x.rowwise() - x.colwise().mean();
  const Eigen::MatrixXd cov = centred.transpose() * centred / static_cast<double>(x.rows() - 1);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(cov);
  const Eigen::Index d = x.cols();
  Eigen::MatrixXd loadings(d, dims);
  for (int k = 0; k < dims; ++k) {
    Eigen::VectorXd v = eig.eigenvectors().col(d - 1 - k);  // ascending eigenvalues
    Eigen::Index top = 0;
    v.cwiseAbs().maxCoeff(&top);
    if (v(top) < 0) v = -v;
    loadings.col(k) = v;
  }
  return centred * loadings;
}

}  // namespace moca::embed
