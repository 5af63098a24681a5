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

TEST_CASE("permutation_test_each: per-entry and step-down p-values against a recount") {
  // Three statistics of one permutation: the canonical correlations of U and a permuted M
  // (one planted pair, so entry 0 is large and entries 1, 2 sit at the null level), shuffled
  // out of order so that the step-down order is not the index order.
  const Eigen::MatrixXd Z = gaussian_matrix(60, 1, 31);
  const Eigen::MatrixXd U = Z.replicate(1, 3) + gaussian_matrix(60, 3, 32);
  const Eigen::MatrixXd M = Z.replicate(1, 3) + gaussian_matrix(60, 3, 33);
  std::vector<Eigen::VectorXd> seen;
  const RowStatistics stat = [&](const std::vector<Eigen::Index>& perm) {
    LinearCcaOptions o;
    o.components = 3;
    const Eigen::VectorXd r = linear_cca(U, rows_of(M, perm), o).correlations;
    Eigen::VectorXd t(3);
    t << r(1), r(0), r(2);
    seen.push_back(t);
    return t;
  };
  const int P = 199;
  const PermutationTestEach res = permutation_test_each(60, stat, P, 7);
  REQUIRE(seen.size() == static_cast<size_t>(P + 1));
  const Eigen::VectorXd t0 = seen.front();
  CHECK((res.observed - t0).norm() == 0.0);
  // Recount: per entry, and step-down with the max over every entry whose observed value is
  // not larger (the hypotheses still in the family at that step), then monotone in that order.
  Eigen::VectorXd p(3), sd(3);
  for (int e = 0; e < 3; ++e) {
    int c = 0, cm = 0;
    for (int b = 1; b <= P; ++b) {
      const Eigen::VectorXd& t = seen[static_cast<size_t>(b)];
      if (t(e) >= t0(e)) ++c;
      double mx = -1.0;
      for (int l = 0; l < 3; ++l) {
        if (t0(l) <= t0(e)) mx = std::max(mx, t(l));
      }
      if (mx >= t0(e)) ++cm;
    }
    p(e) = (1.0 + c) / (P + 1.0);
    sd(e) = (1.0 + cm) / (P + 1.0);
  }
  for (int e = 0; e < 3; ++e) {  // monotone: at least the adjusted p of every larger entry
    for (int l = 0; l < 3; ++l) {
      if (t0(l) > t0(e)) sd(e) = std::max(sd(e), sd(l));
    }
  }
  CHECK((res.p_values - p).norm() == 0.0);
  CHECK((res.p_values_step_down - sd).norm() == 0.0);
  CHECK(res.p_values(1) == doctest::Approx(1.0 / (P + 1)));  // the planted pair
  for (int e = 0; e < 3; ++e) CHECK(res.p_values_step_down(e) >= res.p_values(e));
  // The scalar test is entry 0 of the vector one: same permutations, same p-value.
  seen.clear();
  const RowStatistic first = [&](const std::vector<Eigen::Index>& perm) { return stat(perm)(0); };
  CHECK(permutation_test(60, first, P, 7).p_value == res.p_values(0));
  const RowStatistics ragged = [&](const std::vector<Eigen::Index>& perm) {
    return Eigen::VectorXd::Constant(perm[0] == 0 ? 2 : 3, 0.5);
  };
  CHECK_THROWS_AS(permutation_test_each(60, ragged, 50, 1), std::runtime_error);
}

TEST_CASE("bootstrap_each: every entry over the same resamples as the scalar bootstrap") {
  const Eigen::MatrixXd X = gaussian_matrix(80, 2, 41);
  const RowStatistics means = [&](const std::vector<Eigen::Index>& rows) {
    return Eigen::VectorXd(rows_of(X, rows).colwise().mean().transpose());
  };
  const std::vector<BootstrapResult> each = bootstrap_each(80, means, 300, 0.9, 5);
  REQUIRE(each.size() == 2);
  for (Eigen::Index k = 0; k < 2; ++k) {
    const RowStatistic one = [&](const std::vector<Eigen::Index>& rows) { return means(rows)(k); };
    const BootstrapResult b = bootstrap(80, one, 300, 0.9, 5);
    CHECK(b.lower == each[static_cast<size_t>(k)].lower);
    CHECK(b.upper == each[static_cast<size_t>(k)].upper);
    CHECK(b.std_error == each[static_cast<size_t>(k)].std_error);
    // the mean's standard error sd / sqrt(n) (sd ~ 1): the bootstrap's within 25%
    CHECK(b.std_error == doctest::Approx(1.0 / std::sqrt(80.0)).epsilon(0.25));
  }
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
