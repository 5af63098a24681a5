#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "rank_correlation.hpp"

using moca::sim::kendall_tau_b;
using moca::sim::spearman;

TEST_CASE("average ranks with ties") {
  const auto r = moca::sim::average_ranks({10, 20, 20, 5});
  CHECK(r == std::vector<double>{2, 3.5, 3.5, 1});
}

TEST_CASE("perfect monotone relations give +-1; known hand-computed values") {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  CHECK(std::abs(spearman(x, {2, 4, 8, 16, 32}) - 1.0) < 1e-15);
  CHECK(std::abs(spearman(x, {5, 4, 3, 2, 1}) + 1.0) < 1e-15);
  CHECK(std::abs(kendall_tau_b(x, {1, 3, 2, 5, 4}) - 0.6) < 1e-15);  // 8 conc, 2 disc of 10
  // Spearman without ties: 1 - 6 sum d^2 / (n(n^2-1)); d = (0,1,-1,1,-1): 1 - 24/120 = 0.8
  CHECK(std::abs(spearman(x, {1, 3, 2, 5, 4}) - 0.8) < 1e-15);
}

TEST_CASE("tau-b with ties (hand count)") {
  // x = 1,1,2,3 ; y = 1,2,2,3. Pairs: (1,2) tie x; (1,3) C; (1,4) C; (2,3) tie y; (2,4) C;
  // (3,4) C -> C=4, D=0, n0=6, n1=1, n2=1: tau_b = 4 / sqrt(5*5) = 0.8
  CHECK(std::abs(kendall_tau_b({1, 1, 2, 3}, {1, 2, 2, 3}) - 0.8) < 1e-15);
}

TEST_CASE("degenerate and bad input") {
  bool deg = false;
  CHECK(spearman({1, 1, 1}, {1, 2, 3}, &deg) == 0.0);
  CHECK(deg);
  CHECK_THROWS_AS(spearman({1, 2}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(kendall_tau_b({1, 2, 3}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(spearman({1, NAN, 3}, {1, 2, 3}), std::invalid_argument);
}
