#include "moca/kcca/linear_cca.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;
using moca::kcca::test::reference_cca;

TEST_CASE("linear_cca: equals the textbook covariance formula over several sizes") {
  for (int n : {20, 100, 400}) {
    const Eigen::MatrixXd Z = gaussian_matrix(n, 2, 10 + n);
    Eigen::MatrixXd U = gaussian_matrix(n, 4, 20 + n), M = gaussian_matrix(n, 3, 30 + n);
    U.leftCols(2) += Z;
    M.leftCols(2) += 0.5 * Z;
    const Eigen::VectorXd ref = reference_cca(U, M);
    LinearCcaOptions o;
    o.components = 3;
    const LinearCcaResult r = linear_cca(U, M, o);
    for (int i = 0; i < 3; ++i) CHECK(std::abs(r.correlations(i) - ref(i)) < 1e-10);
    CHECK(r.p == 4);
    CHECK(r.q == 3);
    CHECK(r.warning.empty());
    for (double ridge : {0.5, 10.0}) {
      o.ridge = ridge;
      const LinearCcaResult rr = linear_cca(U, M, o);
      const Eigen::VectorXd rref = reference_cca(U, M, ridge);
      for (int i = 0; i < 3; ++i) CHECK(std::abs(rr.correlations(i) - rref(i)) < 1e-10);
    }
  }
}

TEST_CASE("linear_cca: canonical weights satisfy the CCA constraints and give the correlations") {
  // What defines canonical weights, checked from the data: variates (X - mean) w have
  // wᵀ(XcᵀXc + r I) w = 1, are uncorrelated across pairs within a view, and the pair-i variates
  // of the two views have cross product = the i-th (ridge) correlation.
  const int n = 300;
  const Eigen::MatrixXd Z = gaussian_matrix(n, 2, 41);
  Eigen::MatrixXd U = gaussian_matrix(n, 5, 42), M = gaussian_matrix(n, 4, 43);
  U.leftCols(2) += Z;
  M.leftCols(2) += 0.7 * Z;
  U.col(4) = 2.0 * U.col(0) - U.col(1);  // collinear column: rank 4 of 5
  const Eigen::MatrixXd Uc = U.rowwise() - U.colwise().mean();
  const Eigen::MatrixXd Mc = M.rowwise() - M.colwise().mean();
  for (int pca : {0, 3}) {
    for (double ridge : {0.0, 5.0}) {
      CAPTURE(pca);
      CAPTURE(ridge);
      LinearCcaOptions o;
      o.components = 3;
      o.pca = pca;
      o.ridge = ridge;
      const LinearCcaResult plain = linear_cca(U, M, o);
      o.weights = true;
      const LinearCcaResult r = linear_cca(U, M, o);
      REQUIRE(r.weights_u.rows() == 5);
      REQUIRE(r.weights_m.rows() == 4);
      REQUIRE(r.weights_u.cols() == 3);
      for (int i = 0; i < 3; ++i)
        CHECK(std::abs(r.correlations(i) - plain.correlations(i)) < 1e-12);
      const Eigen::MatrixXd Cu = r.weights_u.transpose() * Uc.transpose() * Uc * r.weights_u +
                                 ridge * r.weights_u.transpose() * r.weights_u;
      const Eigen::MatrixXd Cm = r.weights_m.transpose() * Mc.transpose() * Mc * r.weights_m +
                                 ridge * r.weights_m.transpose() * r.weights_m;
      const Eigen::MatrixXd Cum = r.weights_u.transpose() * Uc.transpose() * Mc * r.weights_m;
      CHECK((Cu - Eigen::MatrixXd::Identity(3, 3)).cwiseAbs().maxCoeff() < 1e-9);
      CHECK((Cm - Eigen::MatrixXd::Identity(3, 3)).cwiseAbs().maxCoeff() < 1e-9);
      for (int i = 0; i < 3; ++i) {
        CHECK(std::abs(Cum(i, i) - r.correlations(i)) < 1e-9);
        for (int j = 0; j < 3; ++j)
          if (j != i) CHECK(std::abs(Cum(i, j)) < 1e-9);
      }
      if (ridge == 0.0 && pca == 0) {
        // plain CCA: the first pair's sample correlation is rho_1 of the textbook formula on the
        // four independent columns (the fifth adds no direction)
        const Eigen::VectorXd a = Uc * r.weights_u.col(0), b = Mc * r.weights_m.col(0);
        CHECK(std::abs(a.dot(b) / (a.norm() * b.norm()) - reference_cca(U.leftCols(4), M)(0)) <
              1e-10);
      }
    }
  }
  LinearCcaOptions o;
  CHECK(linear_cca(U, M, o).weights_u.size() == 0);  // not computed unless asked for
}

TEST_CASE("linear_cca: invariant to invertible transforms of each view (no PCA)") {
  const int n = 200;
  const Eigen::MatrixXd Z = gaussian_matrix(n, 1, 1);
  Eigen::MatrixXd U = gaussian_matrix(n, 3, 2), M = gaussian_matrix(n, 3, 3);
  U.col(0) += Z;
  M.col(2) += Z;
  const Eigen::MatrixXd A = gaussian_matrix(3, 3, 4) + 3.0 * Eigen::MatrixXd::Identity(3, 3);
  const Eigen::MatrixXd B = gaussian_matrix(3, 3, 5) + 3.0 * Eigen::MatrixXd::Identity(3, 3);
  LinearCcaOptions o;
  o.components = 3;
  const LinearCcaResult r1 = linear_cca(U, M, o);
  const LinearCcaResult r2 = linear_cca(U * A + Eigen::MatrixXd::Constant(n, 3, 5.0), M * B, o);
  const LinearCcaResult r3 = linear_cca(M, U, o);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::abs(r1.correlations(i) - r2.correlations(i)) < 1e-10);
    CHECK(std::abs(r1.correlations(i) - r3.correlations(i)) < 1e-10);
  }
}

TEST_CASE("linear_cca: PCA first equals CCA of the principal component scores") {
  const int n = 300, p = 400;  // p > n: PCA through the n x n Gram
  const Eigen::MatrixXd Z = gaussian_matrix(n, 5, 7);
  Eigen::MatrixXd U = Z * gaussian_matrix(5, p, 8) + 0.5 * gaussian_matrix(n, p, 9);
  Eigen::MatrixXd M = Z * gaussian_matrix(5, 60, 10) + 0.5 * gaussian_matrix(n, 60, 11);
  U.rightCols(30).setZero();  // zero-variance (masked) columns are accepted
  for (int k : {3, 10}) {
    // Reference: principal component scores from a full SVD.
    auto scores = [k](const Eigen::MatrixXd& X) {
      const Eigen::MatrixXd Xc = X.rowwise() - X.colwise().mean();
      Eigen::BDCSVD<Eigen::MatrixXd> svd(Xc, Eigen::ComputeThinU);
      return Eigen::MatrixXd(svd.matrixU().leftCols(k) * svd.singularValues().head(k).asDiagonal());
    };
    const Eigen::VectorXd ref = reference_cca(scores(U), scores(M));
    for (auto solver : {PcaSolver::kExact, PcaSolver::kRandomized}) {
      LinearCcaOptions o;
      o.pca = k;
      o.components = 2;
      o.pca_solver = solver;
      const LinearCcaResult r = linear_cca(U, M, o);
      const double tol = solver == PcaSolver::kExact ? 1e-9 : 1e-4;
      CHECK(std::abs(r.correlations(0) - ref(0)) < tol);
      CHECK(std::abs(r.correlations(1) - ref(1)) < tol);
      CHECK(r.p == k);
      CHECK(r.explained_variance_u.size() == k);
      CHECK(r.explained_variance_u.sum() <= 1.0 + 1e-12);
      CHECK(r.explained_variance_u(0) >= r.explained_variance_u(k - 1));
      if (solver == PcaSolver::kExact) CHECK(r.pca_residual < 1e-8);
    }
  }
  // Large k against the size exercises the dense path.
  LinearCcaOptions o;
  o.pca = 80;
  const LinearCcaResult r = linear_cca(U, M.leftCols(60), o);
  CHECK(r.q == 60);
}

TEST_CASE("linear_cca: warning when n is too small, null level, Wachter edge") {
  const Eigen::MatrixXd U = gaussian_matrix(30, 20, 1), M = gaussian_matrix(30, 15, 2);
  const LinearCcaResult r = linear_cca(U, M, LinearCcaOptions());
  CHECK(!r.warning.empty());
  CHECK(std::abs(r.correlations(0) - 1.0) < 1e-8);
  CHECK(r.null_level == 1.0);
  CHECK(std::abs(wachter_edge(50, 50, 200) - 0.8660254038) < 1e-9);
  CHECK(std::abs(wachter_edge(50, 50, 1000) - 0.4358898944) < 1e-9);
  CHECK(std::abs(wachter_edge(50, 50, 5000) - 0.1989974874) < 1e-9);
  CHECK_THROWS_AS(wachter_edge(0, 1, 10), std::invalid_argument);
  // Selection bias: independent views sit near the edge.
  const Eigen::MatrixXd A = gaussian_matrix(2000, 20, 3), B = gaussian_matrix(2000, 20, 4);
  const LinearCcaResult ind = linear_cca(A, B, LinearCcaOptions());
  CHECK(std::abs(ind.correlations(0) - ind.null_level) < 0.06);
  // Collinear column: rank warning, still finite.
  Eigen::MatrixXd C = gaussian_matrix(100, 3, 5);
  C.col(2) = C.col(0) + C.col(1);
  const LinearCcaResult col = linear_cca(C, gaussian_matrix(100, 2, 6), LinearCcaOptions());
  CHECK(col.p == 2);
  CHECK(col.warning.find("rank") != std::string::npos);
}

TEST_CASE("linear_cca: error paths") {
  const Eigen::MatrixXd U = gaussian_matrix(10, 2, 1);
  CHECK_THROWS_AS(linear_cca(U, U.topRows(9), LinearCcaOptions()), std::invalid_argument);
  CHECK_THROWS_AS(linear_cca(U.topRows(2), U.topRows(2), LinearCcaOptions()),
                  std::invalid_argument);
  CHECK_THROWS_AS(linear_cca(U, Eigen::MatrixXd::Ones(10, 3), LinearCcaOptions()),
                  std::invalid_argument);  // no variance
  LinearCcaOptions pca;
  pca.pca = 2;
  CHECK_THROWS_AS(linear_cca(U, Eigen::MatrixXd::Ones(10, 3), pca), std::invalid_argument);
  Eigen::MatrixXd bad = U;
  bad(3, 1) = NAN;
  CHECK_THROWS_AS(linear_cca(bad, U, LinearCcaOptions()), std::invalid_argument);
  CHECK_THROWS_AS(linear_cca(U, Eigen::MatrixXd(10, 0), LinearCcaOptions()), std::invalid_argument);
  for (auto mutate : std::initializer_list<void (*)(LinearCcaOptions&)>{
           [](LinearCcaOptions& o) { o.pca = -1; }, [](LinearCcaOptions& o) { o.ridge = -1; },
           [](LinearCcaOptions& o) { o.components = 0; },
           [](LinearCcaOptions& o) { o.rank_tolerance = 1.0; },
           [](LinearCcaOptions& o) { o.pca_iterations = 0; }}) {
    LinearCcaOptions o;
    mutate(o);
    CHECK_THROWS_AS(o.validate(), std::invalid_argument);
    CHECK_THROWS_AS(linear_cca(U, U, o), std::invalid_argument);
  }
}
