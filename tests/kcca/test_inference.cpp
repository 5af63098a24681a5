#include "moca/kcca/inference.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "moca/kcca/linear_cca.hpp"
#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

namespace {
Eigen::MatrixXd rows_of(const Eigen::MatrixXd& X, const std::vector<Eigen::Index>& r) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(r.size()), X.cols());
  for (size_t i = 0; i < r.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = X.row(r[i]);
  return out;
}
}  // namespace

TEST_CASE("bartlett_test: hand-computed statistic and chi-square tail") {
  Eigen::VectorXd r(2);
  r << 0.5, 0.1;
  const BartlettResult b = bartlett_test(r, 100, 2, 3);
  // k = 0: -(100 - 1 - 3) log((1 - .25)(1 - .01)), df 6.
  const double stat0 = -96.0 * std::log(0.75 * 0.99);
  CHECK(std::abs(b.steps[0].statistic - stat0) < 1e-10);
  CHECK(b.steps[0].df == 6.0);
  // k = 1: df 2, chi2(2) upper tail = exp(-x/2).
  const double stat1 = -96.0 * std::log(0.99);
  CHECK(std::abs(b.steps[1].statistic - stat1) < 1e-10);
  CHECK(std::abs(b.steps[1].p_value - std::exp(-stat1 / 2)) < 1e-12);
  // chi2(6) upper tail: e^{-h} (1 + h + h^2 / 2), h = x / 2.
  const double h = stat0 / 2;
  CHECK(std::abs(b.steps[0].p_value - std::exp(-h) * (1 + h + h * h / 2)) < 1e-12);
  CHECK(b.nonzero == 1);
}

TEST_CASE("bartlett_test: calibrated under independence, detects a real correlation") {
  int rejections = 0;
  for (int rep = 0; rep < 40; ++rep) {
    const Eigen::MatrixXd U = gaussian_matrix(300, 3, 1000 + rep);
    const Eigen::MatrixXd M = gaussian_matrix(300, 2, 2000 + rep);
    LinearCcaOptions o;
    o.components = 2;
    const Eigen::VectorXd r = linear_cca(U, M, o).correlations;
    if (bartlett_test(r, 300, 3, 2).steps[0].p_value < 0.05) ++rejections;
  }
  CHECK(rejections <= 7);  // expected 2 of 40; P(>= 8) < 1e-3
  const Eigen::MatrixXd Z = gaussian_matrix(300, 1, 5);
  Eigen::MatrixXd U = gaussian_matrix(300, 3, 6), M = gaussian_matrix(300, 2, 7);
  U.col(0) += 0.6 * Z;
  M.col(1) += 0.6 * Z;
  LinearCcaOptions o;
  o.components = 2;
  const BartlettResult b = bartlett_test(linear_cca(U, M, o).correlations, 300, 3, 2);
  CHECK(b.nonzero == 1);
}

TEST_CASE("bootstrap: covers the truth and is reproducible") {
  const Eigen::MatrixXd Z = gaussian_matrix(400, 1, 11);
  const Eigen::MatrixXd U = Z + gaussian_matrix(400, 1, 12);
  const Eigen::MatrixXd M = Z + gaussian_matrix(400, 1, 13);
  // True correlation 1/2.
  const RowStatistic stat = [&](const std::vector<Eigen::Index>& rows) {
    return linear_cca(rows_of(U, rows), rows_of(M, rows), LinearCcaOptions()).correlations(0);
  };
  const BootstrapResult b = bootstrap(400, stat, 200, 0.95, 3);
  CHECK(b.lower < 0.5);
  CHECK(b.upper > 0.5);
  CHECK(b.lower < b.estimate);
  CHECK(b.estimate < b.upper);
  // Standard error of a correlation ~ (1 - rho^2) / sqrt(n) = 0.0375.
  CHECK(std::abs(b.std_error - 0.0375) < 0.015);
  const BootstrapResult again = bootstrap(400, stat, 200, 0.95, 3);
  CHECK(again.replicates == b.replicates);
  CHECK_THROWS_AS(bootstrap(1, stat, 10, 0.95, 0), std::invalid_argument);
  CHECK_THROWS_AS(bootstrap(400, stat, 1, 0.95, 0), std::invalid_argument);
  CHECK_THROWS_AS(bootstrap(400, stat, 10, 1.0, 0), std::invalid_argument);
  const RowStatistic nan = [](const std::vector<Eigen::Index>&) { return NAN; };
  CHECK_THROWS_AS(bootstrap(10, nan, 10, 0.9, 0), std::runtime_error);
}

TEST_CASE("permutation_test: small p for dependence, uniform-ish under independence") {
  const Eigen::MatrixXd Z = gaussian_matrix(150, 1, 21);
  const Eigen::MatrixXd U = Z.replicate(1, 2) + 0.5 * gaussian_matrix(150, 2, 22);
  const Eigen::MatrixXd M = Z.replicate(1, 2) + 0.5 * gaussian_matrix(150, 2, 23);
  const Eigen::MatrixXd W = gaussian_matrix(150, 2, 24);
  auto make = [&](const Eigen::MatrixXd& second) {
    return RowStatistic([&U, second](const std::vector<Eigen::Index>& perm) {
      return linear_cca(U, rows_of(second, perm), LinearCcaOptions()).correlations(0);
    });
  };
  const PermutationResult dep = permutation_test(150, make(M), 99, 1);
  CHECK(dep.p_value == doctest::Approx(0.01).epsilon(1e-12));
  const PermutationResult ind = permutation_test(150, make(W), 99, 1);
  CHECK(ind.p_value > 0.01);
  CHECK(ind.permutations == 99);
  CHECK_THROWS_AS(permutation_test(150, make(W), 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(permutation_test(1, make(W), 5, 1), std::invalid_argument);
}

TEST_CASE("bartlett_test: error paths") {
  Eigen::VectorXd r(1);
  r << 0.5;
  CHECK_THROWS_AS(bartlett_test(r, 100, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(bartlett_test(r, 3, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(bartlett_test(r, 100, 1, 1, 0.0), std::invalid_argument);
  r << 1.0001;
  CHECK_THROWS_AS(bartlett_test(r, 100, 1, 1), std::invalid_argument);
  r << -0.1;
  CHECK_THROWS_AS(bartlett_test(r, 100, 1, 1), std::invalid_argument);
}

TEST_CASE("bartlett_test: a correlation of 1 (collinear views) rejects with p = 0") {
  // The limit rho -> 1: Wilks' lambda -> 0, the statistic -> infinity, p -> 0 for every step
  // that includes it; the later steps are the ordinary test of the remaining correlations.
  Eigen::VectorXd r(2);
  r << 1.0, 0.05;
  const BartlettResult b = bartlett_test(r, 100, 2, 2);
  CHECK(b.steps[0].wilks == 0.0);
  CHECK(std::isinf(b.steps[0].statistic));
  CHECK(b.steps[0].p_value == 0.0);
  // Step 1 by hand: multiplier n - 1 - (p + q + 1) / 2 = 96.5, df (2 - 1)(2 - 1) = 1, and the
  // chi-square(1) tail is erfc(sqrt(x / 2)).
  const double x = -96.5 * std::log(1.0 - 0.05 * 0.05);
  CHECK(b.steps[1].statistic == doctest::Approx(x).epsilon(1e-12));
  CHECK(b.steps[1].p_value == doctest::Approx(std::erfc(std::sqrt(x / 2.0))).epsilon(1e-10));
  CHECK(b.nonzero == 1);
}
