#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/embed/umap.hpp"

using namespace moca;
using namespace moca::embed;

namespace {

// Three Gaussian clusters in 50-D, centres 20 apart on three axes, unit noise.
Eigen::MatrixXd clusters(int per, std::vector<int>& label, std::uint64_t seed) {
  Rng rng(seed);
  Eigen::MatrixXd x(3 * per, 50);
  label.clear();
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < per; ++i) {
      for (int d = 0; d < 50; ++d) x(c * per + i, d) = standard_normal(rng) + (d == c ? 20.0 : 0.0);
      label.push_back(c);
    }
  }
  return x;
}

// The k nearest other points of row i of y by brute force (distance, then index).
std::vector<int> nearest(const Eigen::MatrixXd& y, Eigen::Index i, int k) {
  std::vector<std::pair<double, int>> d;
  for (Eigen::Index j = 0; j < y.rows(); ++j)
    if (j != i) d.push_back({(y.row(j) - y.row(i)).squaredNorm(), static_cast<int>(j)});
  std::sort(d.begin(), d.end());
  std::vector<int> out;
  for (int c = 0; c < k; ++c) out.push_back(d[static_cast<size_t>(c)].second);
  return out;
}

}  // namespace

TEST_CASE("exact_knn equals brute force, for any thread count") {
  Rng rng(3);
  Eigen::MatrixXd x(57, 7);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = standard_normal(rng);
  for (int threads : {1, 3}) {
    const KnnGraph g = exact_knn(x, 5, threads);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const std::vector<int> want = nearest(x, i, 5);
      for (int c = 0; c < 5; ++c) {
        CHECK(g.index(i, c) == want[static_cast<size_t>(c)]);
        CHECK(
            g.distance(i, c) ==
            doctest::Approx((x.row(i) - x.row(want[static_cast<size_t>(c)])).norm()).epsilon(1e-9));
      }
    }
  }
  CHECK_THROWS_AS(exact_knn(x, 57, 1), std::invalid_argument);
  CHECK_THROWS_AS(exact_knn(x, 0, 1), std::invalid_argument);
}

TEST_CASE("fuzzy simplicial set: symmetric fuzzy union, weight 1 to the nearest neighbour") {
  Rng rng(4);
  Eigen::MatrixXd x(40, 3);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = standard_normal(rng);
  const KnnGraph g = exact_knn(x, 6, 1);
  const auto edges = fuzzy_simplicial_set(g);
  std::map<std::pair<int, int>, double> w;
  for (const auto& e : edges) {
    CHECK(e.weight > 0.0);
    CHECK(e.weight <= 1.0);
    CHECK(e.head != e.tail);
    w[{e.head, e.tail}] = e.weight;
  }
  for (const auto& [ij, v] : w) {
    REQUIRE(w.count({ij.second, ij.first}) == 1);
    CHECK(w.at({ij.second, ij.first}) == v);
  }
  // d - rho = 0 for the nearest neighbour: membership exp(0) = 1, and the union a + b - ab
  // stays 1 (to rounding).
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    CHECK(w.at({static_cast<int>(i), g.index(i, 0)}) == doctest::Approx(1.0).epsilon(1e-15));
}

TEST_CASE("fit_curve gives umap-learn's a, b") {
  // umap-learn's find_ab_params(1.0, 0.1) is scipy.optimize.curve_fit on these 300 points:
  // (1.57694346, 0.89506088), computed with Debian's scipy 1.10 when this test was written.
  const CurveParams p = fit_curve(1.0, 0.1);
  CHECK(p.a == doctest::Approx(1.57694346).epsilon(1e-5));
  CHECK(p.b == doctest::Approx(0.89506088).epsilon(1e-5));
}

TEST_CASE("UMAP keeps three well-separated 50-D clusters apart; seeded; thread-independent") {
  std::vector<int> label;
  const Eigen::MatrixXd x = clusters(60, label, 11);
  UmapOptions o;
  o.seed = 5;
  o.threads = 1;
  const Eigen::MatrixXd y = umap_layout(x, o);
  REQUIRE(y.rows() == 180);
  REQUIRE(y.cols() == 2);
  CHECK(y.allFinite());
  int foreign = 0;
  for (Eigen::Index i = 0; i < y.rows(); ++i)
    for (int j : nearest(y, i, 10))
      foreign += label[static_cast<size_t>(j)] != label[static_cast<size_t>(i)];
  CHECK(foreign == 0);
  // Same seed -> the same coordinates, also with another thread count.
  o.threads = 3;
  CHECK(umap_layout(x, o) == y);
  // Control: another seed moves the points.
  o.seed = 6;
  CHECK((umap_layout(x, o) - y).norm() > 1e-3);
}

TEST_CASE("UMAP refuses maps it cannot make") {
  Eigen::MatrixXd one = Eigen::MatrixXd::Ones(1, 4);
  CHECK_THROWS_WITH_AS(umap_layout(one), doctest::Contains("points (1) must be >= 2"),
                       std::invalid_argument);
  Eigen::MatrixXd ten = Eigen::MatrixXd::Random(10, 4);
  CHECK_THROWS_WITH_AS(umap_layout(ten), doctest::Contains("neighbors (15)"),
                       std::invalid_argument);
  Eigen::MatrixXd big = Eigen::MatrixXd::Zero(kUmapMaxPoints + 1, 1);
  CHECK_THROWS_WITH_AS(umap_layout(big), doctest::Contains("20000"), std::invalid_argument);
  ten(3, 1) = std::nan("");
  UmapOptions o;
  o.neighbors = 5;
  CHECK_THROWS_AS(umap_layout(ten, o), std::invalid_argument);
  o.neighbors = 1;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("neighbors (1) must be >= 2"),
                       std::invalid_argument);
}
