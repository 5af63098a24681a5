#pragma once
/// \file centering.hpp
/// Centring of Gram matrices in feature space.
#include <Eigen/Core>

namespace moca::kcca {

/// Centres a square Gram matrix in O(n^2): K~ = H K H with H = I - 11^T/n, computed as
/// K~_ij = K_ij - r_i - c_j + g (r_i row means, c_j column means, g the grand mean), never as
/// two O(n^3) products. Throws std::invalid_argument if K is not square or is empty.
Eigen::MatrixXd center_gram(const Eigen::Ref<const Eigen::MatrixXd>& K);

/// Centres a test-versus-train cross Gram K_test (m x n) with the training Gram's statistics:
/// K~ = K_test - 1_m r^T - (row means of K_test) 1_n^T + g, where r are the column means and g
/// the grand mean of the n x n training Gram K_train (out-of-sample centring).
Eigen::MatrixXd center_cross_gram(const Eigen::Ref<const Eigen::MatrixXd>& K_test,
                                  const Eigen::Ref<const Eigen::MatrixXd>& K_train);

}  // namespace moca::kcca
