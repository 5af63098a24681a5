#include "moca/kcca/view_kernel.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "moca/kcca/kcca.hpp"
#include "test_util.hpp"

using namespace moca::kcca;
using moca::kcca::test::gaussian_matrix;

namespace {

// n views with sizes 1 + (i mod 4) patches of dimension d; positions (i mod 3, patch index).
ViewSet make_views(Eigen::Index n, Eigen::Index d, std::uint64_t seed) {
  ViewSet v;
  v.offsets.push_back(0);
  for (Eigen::Index i = 0; i < n; ++i) v.offsets.push_back(v.offsets.back() + 1 + i % 4);
  v.features = gaussian_matrix(v.offsets.back(), d, seed);
  v.positions.resize(v.offsets.back(), 2);
  for (Eigen::Index r = 0; r < v.offsets.back(); ++r) {
    v.positions(r, 0) = static_cast<double>(r % 3);
    v.positions(r, 1) = static_cast<double>(r % 7);
  }
  return v;
}

// Brute force: mean over all patch pairs of the product kernel.
Eigen::MatrixXd brute(const ViewSet& v, const PatchKernel& k) {
  const Eigen::Index n = v.size();
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      double s = 0;
      for (Eigen::Index p = v.offsets[i]; p < v.offsets[i + 1]; ++p) {
        for (Eigen::Index q = v.offsets[j]; q < v.offsets[j + 1]; ++q) {
          s += k(v.features.row(p).transpose(), v.positions(p, 0), v.positions(p, 1),
                 v.features.row(q).transpose(), v.positions(q, 0), v.positions(q, 1));
        }
      }
      K(i, j) = s / static_cast<double>(v.patches(i) * v.patches(j));
    }
  }
  return K;
}

}  // namespace

TEST_CASE("view_gram: exact path equals the brute-force mean over patch pairs") {
  const ViewSet v = make_views(23, 3, 5);
  PatchKernel k;
  k.value = Kernel::gaussian(1.3);
  for (int variant = 0; variant < 3; ++variant) {
    if (variant == 1) k.position.modality_coupling = 0.25;
    if (variant == 2) k.position.time_sigma = 2.0;
    ViewGramOptions o;
    o.method = ViewGramMethod::kExact;
    const Eigen::MatrixXd K = view_gram(v, k, o);
    CHECK((K - brute(v, k)).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((K - K.transpose()).cwiseAbs().maxCoeff() == 0.0);
    // PSD.
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(K);
    CHECK(es.eigenvalues().minCoeff() > -1e-10);
  }
}

TEST_CASE("view_gram: linear fast path is the Gram of mean patch features") {
  const ViewSet v = make_views(31, 4, 6);
  PatchKernel k;
  k.value = Kernel::linear();
  const Eigen::MatrixXd fast = view_gram(v, k);
  ViewGramOptions o;
  o.method = ViewGramMethod::kExact;
  CHECK((fast - view_gram(v, k, o)).cwiseAbs().maxCoeff() < 1e-11);
  const Eigen::MatrixXd F = view_features(v, k);
  CHECK(F.rows() == 31);
  CHECK((F.row(2) - v.features.middleRows(v.offsets[2], v.patches(2)).colwise().mean()).norm() <
        1e-14);
}

TEST_CASE("view_gram: random Fourier features approximate the Gaussian view kernel") {
  const ViewSet v = make_views(20, 3, 7);
  PatchKernel k;
  k.value = Kernel::gaussian(2.0);
  ViewGramOptions o;
  o.method = ViewGramMethod::kRandomFeatures;
  o.rff_dimension = 20000;
  o.seed = 3;
  const Eigen::MatrixXd approx = view_gram(v, k, o);
  o.method = ViewGramMethod::kExact;
  const Eigen::MatrixXd exact = view_gram(v, k, o);
  // Error of D-term Monte Carlo ~ sqrt(2 / D) ~ 0.01.
  CHECK((approx - exact).cwiseAbs().maxCoeff() < 0.05);
  // Seeded: same seed, same numbers.
  o.method = ViewGramMethod::kRandomFeatures;
  CHECK((view_gram(v, k, o) - approx).cwiseAbs().maxCoeff() == 0.0);
  const Eigen::MatrixXd Z = rff_features(v.features, 2.0, 50000, 1);
  const double e01 = std::exp(-(v.features.row(0) - v.features.row(1)).squaredNorm() / 8.0);
  CHECK(std::abs(Z.row(0).dot(Z.row(1)) - e01) < 0.03);
}

TEST_CASE("view_gram: sigma -> 0 gives I/|V| and the notes' mask formula (6.8)") {
  // Distinct patches, tiny bandwidth: patch kernel = identity, K_view(i, i) = 1/|V|, 0 off it.
  const Eigen::Index n = 12;
  ViewSet u, m;
  u.offsets.push_back(0);
  m.offsets.push_back(0);
  for (Eigen::Index i = 0; i < n; ++i) {
    u.offsets.push_back(u.offsets.back() + 3);
    m.offsets.push_back(m.offsets.back() + 5);
  }
  u.features = gaussian_matrix(3 * n, 2, 8);
  m.features = gaussian_matrix(5 * n, 2, 9);
  PatchKernel k;
  k.value = Kernel::gaussian(1e-6);
  const Eigen::MatrixXd Ku = view_gram(u, k), Km = view_gram(m, k);
  CHECK((Ku - Eigen::MatrixXd::Identity(n, n) / 3.0).cwiseAbs().maxCoeff() < 1e-12);
  const double g = 0.2;
  KccaOptions o;
  o.gamma_u = o.gamma_m = g;
  o.center = false;
  const double rho = kcca(Ku, Km, o).correlations(0);
  CHECK(std::abs(rho - 1.0 / std::sqrt((1 + g * 3) * (1 + g * 5))) < 1e-10);
  // The complement (views swapped) scores the same.
  CHECK(std::abs(kcca(Km, Ku, o).correlations(0) - rho) < 1e-12);
}

TEST_CASE("view_gram: cross view Gram matches the square one") {
  const ViewSet v = make_views(10, 3, 12);
  PatchKernel k;
  k.value = Kernel::laplacian(1.0);
  CHECK((cross_view_gram(v, v, k) - view_gram(v, k)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("view_gram: error paths") {
  ViewSet v = make_views(5, 2, 13);
  PatchKernel k;
  k.value = Kernel::gaussian(1.0);
  ViewSet empty_view = v;
  empty_view.offsets[3] = empty_view.offsets[2];  // view 2 has zero patches
  bool named = false;
  try {
    view_gram(empty_view, k);
  } catch (const std::invalid_argument& e) {
    named = std::string(e.what()).find("view 2 has zero patches") != std::string::npos;
  }
  CHECK(named);
  ViewSet bad = v;
  bad.offsets.back() += 1;
  CHECK_THROWS_AS(view_gram(bad, k), std::invalid_argument);
  bad = v;
  bad.offsets.front() = 1;
  CHECK_THROWS_AS(view_gram(bad, k), std::invalid_argument);
  bad = v;
  bad.features(0, 0) = NAN;
  CHECK_THROWS_AS(view_gram(bad, k), std::invalid_argument);
  bad = v;
  bad.positions.resize(3, 2);
  CHECK_THROWS_AS(view_gram(bad, k), std::invalid_argument);
  ViewGramOptions o;
  o.rff_dimension = 0;
  CHECK_THROWS_AS(view_gram(v, k, o), std::invalid_argument);
  o = ViewGramOptions();
  o.method = ViewGramMethod::kRandomFeatures;
  PatchKernel lap;
  lap.value = Kernel::laplacian(1.0);
  CHECK_THROWS_AS(view_gram(v, lap, o), std::invalid_argument);
  CHECK_THROWS_AS(view_features(v, lap), std::invalid_argument);
  PatchKernel pos = k;
  pos.position.modality_coupling = 0.5;
  CHECK_THROWS_AS(view_features(v, pos), std::invalid_argument);
  pos.position.modality_coupling = 1.5;
  CHECK_THROWS_AS(view_gram(v, pos), std::invalid_argument);
  // A position kernel without positions.
  ViewSet nopos = v;
  nopos.positions.resize(0, 0);
  PatchKernel tk = k;
  tk.position.time_sigma = 1.0;
  CHECK_THROWS_AS(view_gram(nopos, tk), std::invalid_argument);
  CHECK_NOTHROW(view_gram(nopos, k));
  CHECK_THROWS_AS(rff_features(v.features, 0.0, 10, 0), std::invalid_argument);
  CHECK_THROWS_AS(rff_features(v.features, 1.0, 0, 0), std::invalid_argument);
}
