#pragma once
/// \file pca_map.hpp
/// The PCA map: the scores of the rows of x on its first principal components (x centred; the
/// eigenvectors of the covariance, largest eigenvalue first). Each component's sign is fixed so
/// that its loading of largest magnitude is positive, so the map is deterministic.
#include <Eigen/Core>

namespace moca::embed {

/// n x dims scores. std::invalid_argument for fewer than 2 rows, dims outside [1, columns] or
/// non-finite values.
Eigen::MatrixXd pca_layout(const Eigen::MatrixXd& x, int dims = 2);

}  // namespace moca::embed
