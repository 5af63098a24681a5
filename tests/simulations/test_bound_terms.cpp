#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bound_check.hpp"
#include "moca/common/random.hpp"

using moca::sim::bound_terms;
using Rows = std::vector<std::vector<double>>;

TEST_CASE("eps = 0 (perfect pseudo-inverse): the exact identity L = 2c^2 - 2A") {
  const Rows h = {{1, 0}, {0, 2}, {3, 4}};
  const Rows x = {{0, 1}, {1, 1}, {4, 3}};
  for (double c : {1.0, 2.5}) {
    const auto t = bound_terms(h, x, x, c);
    CHECK(std::abs(t.eps) < 1e-15);
    CHECK(std::abs(t.xi) < 1e-12);
    CHECK(t.holds);
  }
}

TEST_CASE("hand-computed example with c = 1") {
  // One window: h = (1,0), hg = (0,1), x = (0,1): L = 2, A = 0, eps = 0 -> xi = 0.
  // Second window: h = (1,0), hg = (1,0), x = (0,1): L = 2, A = 1, eps = 2.
  // Means: L = 2, A = 0.5, eps = 1, gap = 1, xi = 1, bound = 1 + 2 sqrt(1) = 3.
  const auto t = bound_terms({{1, 0}, {1, 0}}, {{0, 1}, {1, 0}}, {{0, 1}, {0, 1}}, 1.0);
  CHECK(std::abs(t.loss - 2.0) < 1e-15);
  CHECK(std::abs(t.alignment - 0.5) < 1e-15);
  CHECK(std::abs(t.eps - 1.0) < 1e-15);
  CHECK(std::abs(t.xi - 1.0) < 1e-15);
  CHECK(std::abs(t.bound - 3.0) < 1e-15);
  CHECK(t.holds);
  CHECK(t.windows == 2);
}

TEST_CASE("the band holds on random vectors of several sizes; scale invariance") {
  moca::Rng rng(7);
  for (int d : {1, 3, 20}) {
    for (int n : {1, 5, 50}) {
      Rows h(n), hg(n), x(n), h2(n);
      for (int i = 0; i < n; ++i) {
        for (int k = 0; k < d; ++k) {
          h[i].push_back(moca::standard_normal(rng));
          hg[i].push_back(moca::standard_normal(rng));
          x[i].push_back(moca::standard_normal(rng));
          h2[i].push_back(3.0 * h[i].back());
        }
      }
      const auto t = bound_terms(h, hg, x, 1.3);
      CHECK(t.holds);
      CHECK(std::abs(t.xi) <= t.bound + 1e-12);
      const auto t2 = bound_terms(h2, hg, x, 1.3);  // each row is rescaled to norm c
      CHECK(std::abs(t2.loss - t.loss) < 1e-12);
    }
  }
}

TEST_CASE("bound_terms errors and skipped rows") {
  CHECK_THROWS_AS(bound_terms({{1}}, {{1}, {2}}, {{1}}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(bound_terms({{1}}, {{1}}, {{1}}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(bound_terms({{1, 2}}, {{1}}, {{1}}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(bound_terms({{0}}, {{1}}, {{1}}, 1.0), std::invalid_argument);  // nothing left
  const auto t = bound_terms({{0}, {1}}, {{1}, {1}}, {{1}, {1}}, 1.0);
  CHECK(t.windows == 1);
}
