#include "moca/kcca/kernels.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

namespace {
Eigen::MatrixXd series(std::initializer_list<double> v) {
  Eigen::MatrixXd s(static_cast<Eigen::Index>(v.size()), 1);
  Eigen::Index i = 0;
  for (double x : v) s(i++, 0) = x;
  return s;
}
}  // namespace

TEST_CASE("kernels: Gram entries equal the pairwise kernel, symmetric, PSD") {
  const Eigen::MatrixXd X = gaussian_matrix(37, 5, 1), Y = gaussian_matrix(11, 5, 2);
  for (const Kernel& k : {Kernel::linear(), Kernel::gaussian(1.7), Kernel::polynomial(3, 0.5),
                          Kernel::laplacian(2.5)}) {
    const Eigen::MatrixXd K = gram(X, k);
    const Eigen::MatrixXd C = cross_gram(X, Y, k);
    double err = 0.0, cerr = 0.0;
    for (int i = 0; i < 37; ++i) {
      for (int j = 0; j < 37; ++j) {
        err = std::max(err, std::abs(K(i, j) - k(X.row(i).transpose(), X.row(j).transpose())));
      }
      for (int j = 0; j < 11; ++j) {
        cerr = std::max(cerr, std::abs(C(i, j) - k(X.row(i).transpose(), Y.row(j).transpose())));
      }
    }
    CHECK(err < 1e-9 * std::max(1.0, K.cwiseAbs().maxCoeff()));
    CHECK(cerr < 1e-9 * std::max(1.0, C.cwiseAbs().maxCoeff()));
    CHECK((K - K.transpose()).cwiseAbs().maxCoeff() == 0.0);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(K);
    CHECK(es.eigenvalues().minCoeff() > -1e-9 * es.eigenvalues().maxCoeff());
  }
  // Closed forms.
  Eigen::VectorXd a(2), b(2);
  a << 0, 0;
  b << 3, 4;
  CHECK(std::abs(Kernel::gaussian(5.0)(a, b) - std::exp(-25.0 / 50.0)) < 1e-15);
  CHECK(std::abs(Kernel::laplacian(5.0)(a, b) - std::exp(-1.0)) < 1e-15);
  CHECK(std::abs(Kernel::polynomial(2, 1.0)(b, b) - 26.0 * 26.0) < 1e-12);
  CHECK(Kernel::gaussian(1.0).describe() == "rbf(sigma=1)");
}

TEST_CASE("kernels: parse and names") {
  CHECK(moca::parse_enum(kKernelTypeNames, "rbf", "kernel") == KernelType::kGaussian);
  CHECK(moca::parse_enum(kKernelTypeNames, "gaussian", "kernel") == KernelType::kGaussian);
  CHECK(moca::parse_enum(kKernelTypeNames, "poly", "kernel") == KernelType::kPolynomial);
  CHECK(moca::parse_enum(kKernelTypeNames, "laplacian", "kernel") == KernelType::kLaplacian);
  CHECK(moca::parse_enum(kKernelTypeNames, "linear", "kernel") == KernelType::kLinear);
  CHECK(kernel_type_name(KernelType::kGaussian) == "rbf");
  CHECK_THROWS_AS(moca::parse_enum(kKernelTypeNames, "RBF", "kernel"), std::invalid_argument);
}

TEST_CASE("kernels: median heuristic") {
  Eigen::MatrixXd X(3, 1);
  X << 0, 1, 3;  // distances 1, 2, 3
  CHECK(median_heuristic_sigma(X, 0) == 2.0);
  Eigen::MatrixXd Y(4, 1);
  Y << 0, 1, 3, 7;  // distances 1 2 3 4 6 7 -> median (3 + 4) / 2
  CHECK(median_heuristic_sigma(Y, 0) == 3.5);
  const Eigen::MatrixXd Z = gaussian_matrix(3000, 2, 5);
  const double s1 = median_heuristic_sigma(Z, 7, 500), s2 = median_heuristic_sigma(Z, 7, 500);
  CHECK(s1 == s2);
  // Median distance of 2-d standard normals: sqrt(2 * 2 ln 2) (Rayleigh with scale sqrt(2)).
  CHECK(std::abs(s1 - std::sqrt(4.0 * std::log(2.0))) < 0.1);
  CHECK_THROWS_AS(median_heuristic_sigma(Eigen::MatrixXd::Ones(5, 2), 0), std::invalid_argument);
  CHECK_THROWS_AS(median_heuristic_sigma(X.topRows(1), 0), std::invalid_argument);
  CHECK_THROWS_AS(median_heuristic_sigma(X, 0, 1), std::invalid_argument);
}

TEST_CASE("kernels: global alignment kernel known answers (tslearn)") {
  GakOptions o;
  o.sigma = 2.0;
  CHECK(std::abs(gak(series({1, 2, 3}), series({1, 2, 2, 3}), o) - 15.358190) < 1e-6);
  CHECK(std::abs(normalized_gak(series({1, 2, 3}), series({1, 2, 2, 3}), o) - 0.839337) < 1e-6);
  o.sigma = 1.0;
  CHECK(std::abs(gak(series({1, 2, 3}), series({1, 2, 2, 3, 4}), o) - 3.166011) < 1e-6);
  CHECK(std::abs(normalized_gak(series({1, 2, 3}), series({1, 2, 2, 3, 4}), o) - 0.273386) < 1e-6);
  // Long series: log space does not overflow.
  const Eigen::MatrixXd z = Eigen::MatrixXd::Zero(500, 1);
  const double lg = log_gak(z, z, o);
  CHECK(std::isfinite(lg));
  CHECK(std::abs(lg - 875.9469) < 1e-3);
  CHECK(std::abs(normalized_gak(z, z, o) - 1.0) < 1e-12);
  // Length-1 series: the local kernel k~ = k / (2 - k).
  const double k = std::exp(-0.5);
  CHECK(std::abs(gak(series({0}), series({1}), o) - k / (2 - k)) < 1e-14);
}

TEST_CASE("kernels: GAK triangular constraint") {
  GakOptions o;
  o.sigma = 1.0;
  o.triangular = 2;
  // Series lengths differ by >= T: no admissible alignment.
  CHECK(gak(series({1, 2, 3}), series({1, 2, 2, 3, 4}), o) == 0.0);
  CHECK(normalized_gak(series({1, 2, 3}), series({1, 2, 2, 3, 4}), o) == 0.0);
  // T = 1 keeps only the diagonal path with weight 1: product of k~(x_i, y_i).
  o.triangular = 1;
  const Eigen::MatrixXd x = series({0, 1, 2}), y = series({0.5, 1, 3});
  double expect = 1.0;
  for (int i = 0; i < 3; ++i) {
    const double kk = std::exp(-(x(i, 0) - y(i, 0)) * (x(i, 0) - y(i, 0)) / 2.0);
    expect *= kk / (2 - kk);
  }
  CHECK(std::abs(gak(x, y, o) - expect) < 1e-14);
  // A wide band equals the unconstrained kernel up to the (1 - |i-j|/T) weights -> T large.
  o.triangular = 100000;
  GakOptions free;
  free.sigma = 1.0;
  CHECK(std::abs(log_gak(x, y, o) - log_gak(x, y, free)) < 1e-3);
}

TEST_CASE("kernels: GAK errors and bandwidth rule") {
  GakOptions o;
  CHECK_THROWS_AS(log_gak(Eigen::MatrixXd(0, 1), series({1}), o), std::invalid_argument);
  CHECK_THROWS_AS(log_gak(Eigen::MatrixXd::Zero(3, 2), series({1}), o), std::invalid_argument);
  o.sigma = 0;
  CHECK_THROWS_AS(log_gak(series({1}), series({1}), o), std::invalid_argument);
  o.sigma = 1;
  o.triangular = -1;
  CHECK_THROWS_AS(log_gak(series({1}), series({1}), o), std::invalid_argument);
  const std::vector<Eigen::MatrixXd> s = {series({0, 1, 3}), series({0, 1, 3})};
  CHECK(gak_sigma_heuristic(s, 0) > 0.0);
  CHECK_THROWS_AS(gak_sigma_heuristic({}, 0), std::invalid_argument);
}

TEST_CASE("kernels: product kernel with positions") {
  const Eigen::MatrixXd X = gaussian_matrix(9, 3, 8);
  Eigen::MatrixXd P(9, 2);
  for (int i = 0; i < 9; ++i) P.row(i) << i % 3, i / 3;
  ProductKernel k;
  k.value = Kernel::gaussian(1.0);
  CHECK(k.position.trivial());
  k.position.modality_coupling = 0.3;
  k.position.time_sigma = 1.5;
  const Eigen::MatrixXd G = cross_gram(X, P, X, P, k);
  for (int i = 0; i < 9; ++i) {
    for (int j = 0; j < 9; ++j) {
      const double expect = k.value(X.row(i).transpose(), X.row(j).transpose()) *
                            (P(i, 0) == P(j, 0) ? 1.0 : 0.3) *
                            std::exp(-(P(i, 1) - P(j, 1)) * (P(i, 1) - P(j, 1)) / (2 * 2.25));
      CHECK(std::abs(G(i, j) - expect) < 1e-12);
    }
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
  CHECK(es.eigenvalues().minCoeff() > -1e-12);
  k.position.modality_coupling = -0.1;
  CHECK_THROWS_AS(k.validate(), std::invalid_argument);
  k.position.modality_coupling = 0.5;
  k.position.time_sigma = 0.0;
  CHECK_THROWS_AS(k.validate(), std::invalid_argument);
}

TEST_CASE("kernels: error paths") {
  const Eigen::MatrixXd X = gaussian_matrix(4, 2, 9);
  CHECK_THROWS_AS(gram(X, Kernel::gaussian(0.0)), std::invalid_argument);
  CHECK_THROWS_AS(gram(X, Kernel::laplacian(-1.0)), std::invalid_argument);
  CHECK_THROWS_AS(gram(X, Kernel::polynomial(0)), std::invalid_argument);
  CHECK_THROWS_AS(gram(X, Kernel::polynomial(2, -1.0)), std::invalid_argument);
  CHECK_THROWS_AS(cross_gram(X, gaussian_matrix(3, 3, 1), Kernel::linear()), std::invalid_argument);
  Eigen::MatrixXd bad = X;
  bad(0, 0) = INFINITY;
  CHECK_THROWS_AS(gram(bad, Kernel::linear()), std::invalid_argument);
  Eigen::VectorXd a(2), b(3);
  a.setZero();
  b.setZero();
  CHECK_THROWS_AS(Kernel::linear()(a, b), std::invalid_argument);
}
