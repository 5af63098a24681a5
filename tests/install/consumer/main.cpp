// A downstream project using the installed moca headers and libraries.
#include <cmath>
#include <iostream>

#include "moca/common/random.hpp"
#include "moca/kcca/centering.hpp"

int main() {
  moca::Rng rng(42);
  Eigen::MatrixXd X(5, 3);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) X(i, j) = moca::standard_normal(rng);
  const Eigen::MatrixXd K = X * X.transpose();
  const Eigen::MatrixXd Kc = moca::kcca::center_gram(K);
  // A centred Gram has zero row sums.
  const double max_row_sum = Kc.rowwise().sum().cwiseAbs().maxCoeff();
  std::cout << "consumer: max |row sum| of centred Gram = " << max_row_sum << "\n";
  return max_row_sum < 1e-10 ? 0 : 1;
}
