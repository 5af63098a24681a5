#include "moca/kcca/operator_kernel.hpp"
#include "moca/common/error_text.hpp"

#include <Eigen/Eigenvalues>
#include <stdexcept>
#include <string>

namespace moca::kcca {

void validate_psd(const Eigen::MatrixXd& B, const char* what) {
  const std::string w(what);
  if (B.rows() == 0 || B.rows() != B.cols()) {
    throw_invalid(w, "B is " + std::to_string(B.rows()) + " x " + std::to_string(B.cols()) +
                         " (must be square and non-empty)");
  }
  if (!B.allFinite()) throw_invalid(w, "B contains NaN or Inf");
  const double scale = B.cwiseAbs().maxCoeff();
  const double asym = (B - B.transpose()).cwiseAbs().maxCoeff();
  if (asym > 1e-10 * std::max(scale, 1e-300)) {
    throw_invalid(w, "B is not symmetric (max |B - Bᵀ| = " + std::to_string(asym) + ")");
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(B, Eigen::EigenvaluesOnly);
  const double lo = es.eigenvalues().minCoeff();
  const double hi = es.eigenvalues().cwiseAbs().maxCoeff();
  if (lo < -1e-10 * hi) {
    throw_invalid(
        w, "B is not positive semi-definite (smallest eigenvalue " + std::to_string(lo) + ")");
  }
}

void OperatorKernel::validate() const {
  scalar.validate();
  validate_psd(B, "OperatorKernel::validate()");
}

Eigen::MatrixXd OperatorKernel::operator()(const Eigen::Ref<const Eigen::VectorXd>& a,
                                           const Eigen::Ref<const Eigen::VectorXd>& b) const {
  return scalar(a, b) * B;
}

Eigen::MatrixXd block_gram(const Eigen::MatrixXd& K, const Eigen::MatrixXd& B) {
  if (K.rows() != K.cols()) {
    throw_invalid("block_gram()", "K is " + std::to_string(K.rows()) + " x " +
                                      std::to_string(K.cols()) + " (must be square)");
  }
  validate_psd(B, "block_gram()");
  const Eigen::Index n = K.rows(), d = B.rows();
  Eigen::MatrixXd out(n * d, n * d);
#pragma omp parallel for schedule(static)
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) out.block(i * d, j * d, d, d) = K(i, j) * B;
  }
  return out;
}

Eigen::MatrixXd operator_gram(const Eigen::MatrixXd& X, const OperatorKernel& kernel) {
  kernel.validate();
  return block_gram(gram(X, kernel.scalar), kernel.B);
}

}  // namespace moca::kcca
