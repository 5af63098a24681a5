#include "moca/kcca/centering.hpp"
#include "moca/common/error_text.hpp"

#include <stdexcept>
#include <string>

namespace moca::kcca {

Eigen::MatrixXd center_gram(const Eigen::Ref<const Eigen::MatrixXd>& K) {
  if (K.rows() == 0 || K.rows() != K.cols()) {
    throw_invalid("center_gram()", "K is " + std::to_string(K.rows()) + " x " +
                                       std::to_string(K.cols()) +
                                       " (must be square and non-empty)");
  }
  const Eigen::VectorXd r = K.rowwise().mean();
  const Eigen::RowVectorXd c = K.colwise().mean();
  const double g = r.mean();
  Eigen::MatrixXd out = K;
  out.colwise() -= r;
  out.rowwise() -= c;
  out.array() += g;
  return out;
}

Eigen::MatrixXd center_cross_gram(const Eigen::Ref<const Eigen::MatrixXd>& K_test,
                                  const Eigen::Ref<const Eigen::MatrixXd>& K_train) {
  if (K_train.rows() == 0 || K_train.rows() != K_train.cols() || K_test.cols() != K_train.cols()) {
    throw_invalid("center_cross_gram()", "K_test is " + std::to_string(K_test.rows()) + " x " +
                                             std::to_string(K_test.cols()) + ", K_train is " +
                                             std::to_string(K_train.rows()) + " x " +
                                             std::to_string(K_train.cols()) +
                                             " (K_train square, same number of columns)");
  }
  const Eigen::RowVectorXd c = K_train.colwise().mean();
  const double g = c.mean();
  const Eigen::VectorXd rt = K_test.rowwise().mean();
  Eigen::MatrixXd out = K_test;
  out.rowwise() -= c;
  out.colwise() -= rt;
  out.array() += g;
  return out;
}

}  // namespace moca::kcca
