// Tests for policies.hpp: each policy's structural property and exact count, uniformity of
// cross (chi-square, Boost.Math), seed reproducibility.
#include <doctest/doctest.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <map>
#include <set>

#include "moca/masking/policies.hpp"

using namespace moca;
using namespace moca::masking;

namespace {
const data::RowMatrixXf kEmpty;

std::vector<int> masked_columns(const Mask& m) {
  std::vector<int> cols;
  for (int p = 0; p < m.patches(); ++p) {
    int n = 0;
    for (int c = 0; c < m.channels(); ++c) n += m.masked(c, p);
    if (n > 0) cols.push_back(p);
  }
  return cols;
}

bool column_uniform(const Mask& m) {  // every column fully masked or fully visible
  for (int p = 0; p < m.patches(); ++p)
    for (int c = 1; c < m.channels(); ++c)
      if (m.masked(c, p) != m.masked(0, p)) return false;
  return true;
}
}  // namespace

TEST_CASE("masked_count_for uses floor with a guard against binary rounding") {
  CHECK(masked_count_for(0.75, 60) == 45);
  CHECK(masked_count_for(0.7, 60) == 42);
  CHECK(masked_count_for(0.7, 10) == 7);
  CHECK(masked_count_for(0.75, 10) == 7);
  CHECK(masked_count_for(0.3, 10) == 3);
  CHECK(masked_count_for(0.99, 7) == 6);
}

TEST_CASE("choose_subset is a sorted k-subset; errors") {
  Rng rng(1);
  for (int k = 0; k <= 9; ++k) {
    auto s = choose_subset(rng, 9, k);
    CHECK(static_cast<int>(s.size()) == k);
    CHECK(std::set<int>(s.begin(), s.end()).size() == s.size());
    CHECK(std::is_sorted(s.begin(), s.end()));
    for (int v : s) CHECK((v >= 0 && v < 9));
  }
  CHECK_THROWS_AS(choose_subset(rng, 3, 4), std::invalid_argument);
}

TEST_CASE("cross: exact count floor(rho*C*P) over several grids") {
  for (auto [C, P, rho] : {std::tuple{6, 10, 0.75}, std::tuple{3, 7, 0.5}, std::tuple{2, 2, 0.5},
                           std::tuple{6, 10, 0.1}}) {
    CrossPolicy pol(Grid{C, P, 20}, rho);
    Rng rng(7);
    const int expect = static_cast<int>(std::floor(rho * C * P + 1e-9));
    for (int i = 0; i < 50; ++i) CHECK(pol.sample(rng, kEmpty).masked_count() == expect);
  }
  CHECK_THROWS_AS(CrossPolicy(Grid{6, 10, 20}, 0.01), std::invalid_argument);  // 0 cells
  CHECK_THROWS_AS(CrossPolicy(Grid{6, 10, 20}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(CrossPolicy(Grid{6, 10, 20}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(CrossPolicy(Grid{6, 10, 20}, 0.5, "other"), std::invalid_argument);
}

TEST_CASE("cross: every cell equally likely (chi-square, Boost.Math, fixed seed)") {
  // For k-of-n sampling, the indicator vector has Var = p(1-p), Cov = -p(1-p)/(n-1), so
  // sum (O-E)^2 / (N p (1-p) n/(n-1)) is asymptotically chi-square with n-1 df.
  const int C = 6, P = 10, n = C * P, N = 20000;
  CrossPolicy pol(Grid{C, P, 20}, 0.75);
  Rng rng(2024);
  std::vector<double> counts(n, 0.0);
  for (int i = 0; i < N; ++i) {
    const Mask m = pol.sample(rng, kEmpty);
    for (int t = 0; t < n; ++t) counts[static_cast<size_t>(t)] += m.masked(t);
  }
  const double p = 45.0 / n, E = N * p;
  double stat = 0.0;
  for (double o : counts) stat += (o - E) * (o - E);
  stat /= N * p * (1 - p) * n / (n - 1.0);
  const double pval = boost::math::cdf(
      boost::math::complement(boost::math::chi_squared_distribution<double>(n - 1), stat));
  MESSAGE("cross cell chi-square " << stat << " on " << n - 1 << " df, p = " << pval);
  CHECK(pval > 0.001);
}

TEST_CASE("cross: uniform over whole masks, not only over cells (2 x 2 grid, 6 masks)") {
  CrossPolicy pol(Grid{2, 2, 1}, 0.5);
  Rng rng(5);
  std::map<std::string, int> freq;
  const int N = 12000;
  for (int i = 0; i < N; ++i) ++freq[pol.sample(rng, kEmpty).to_string()];
  CHECK(freq.size() == 6u);  // C(4,2)
  double stat = 0.0;
  for (auto& kv : freq) stat += (kv.second - N / 6.0) * (kv.second - N / 6.0) / (N / 6.0);
  const double pval = boost::math::cdf(
      boost::math::complement(boost::math::chi_squared_distribution<double>(5), stat));
  CHECK(pval > 0.001);
}

TEST_CASE("random: same distribution and count as cross, its own name and default") {
  CrossPolicy a(Grid{6, 10, 20}, 0.7, "random"), b(Grid{6, 10, 20}, 0.7, "cross");
  Rng r1(3), r2(3);
  for (int i = 0; i < 20; ++i) CHECK(a.sample(r1, kEmpty) == b.sample(r2, kEmpty));
  CHECK(a.name() == "random");
  CHECK(a.count() == 42);
}

TEST_CASE("sync: floor(rho*P) whole columns, C*floor(rho*P) cells, every column reachable") {
  ColumnPolicy pol(Grid{6, 10, 20}, 0.75, ColumnRule::kUniformSet);
  CHECK(pol.columns() == 7);
  Rng rng(11);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 2000; ++i) {
    const Mask m = pol.sample(rng, kEmpty);
    CHECK(column_uniform(m));
    CHECK(m.masked_count() == 42);
    for (int p : masked_columns(m)) ++hits[static_cast<size_t>(p)];
  }
  for (int h : hits) CHECK(std::abs(h - 1400) < 120);  // 2000 * 0.7, sd ~ 20
}

TEST_CASE("temporal: one contiguous block, uniform start, all channels") {
  ColumnPolicy pol(Grid{6, 10, 20}, 0.3, ColumnRule::kContiguous);
  Rng rng(12);
  std::set<int> starts;
  for (int i = 0; i < 500; ++i) {
    const Mask m = pol.sample(rng, kEmpty);
    CHECK(column_uniform(m));
    CHECK(m.masked_count() == 18);
    const auto cols = masked_columns(m);
    REQUIRE(cols.size() == 3u);
    CHECK(cols.back() - cols.front() == 2);
    starts.insert(cols.front());
  }
  CHECK(starts.size() == 8u);  // 0..P-k
}

TEST_CASE("extrapolation: the last floor(rho*P) columns, deterministic") {
  ColumnPolicy pol(Grid{6, 10, 20}, 0.7, ColumnRule::kLast);
  Rng rng(13);
  const Mask m = pol.sample(rng, kEmpty);
  CHECK(m.masked_count() == 42);
  for (int c = 0; c < 6; ++c)
    for (int p = 0; p < 10; ++p) CHECK(m.masked(c, p) == (p >= 3));
  CHECK(pol.sample(rng, kEmpty) == m);
  CHECK_THROWS_AS(ColumnPolicy(Grid{6, 10, 20}, 0.05, ColumnRule::kLast), std::invalid_argument);
  CHECK(ColumnPolicy(Grid{6, 10, 20}, 0.999, ColumnRule::kLast).columns() == 9);
}

TEST_CASE("sensor: C-keep whole channels masked, keep visible") {
  for (int keep = 1; keep <= 5; ++keep) {
    SensorPolicy pol(Grid{6, 10, 20}, keep);
    Rng rng(14);
    for (int i = 0; i < 50; ++i) {
      const Mask m = pol.sample(rng, kEmpty);
      CHECK(m.masked_count() == (6 - keep) * 10);
      int visible_rows = 0;
      for (int c = 0; c < 6; ++c) {
        int n = 0;
        for (int p = 0; p < 10; ++p) n += m.masked(c, p);
        CHECK((n == 0 || n == 10));
        visible_rows += n == 0;
      }
      CHECK(visible_rows == keep);
    }
  }
  CHECK_THROWS_AS(SensorPolicy(Grid{6, 10, 20}, 0), std::invalid_argument);
  CHECK_THROWS_AS(SensorPolicy(Grid{6, 10, 20}, 6), std::invalid_argument);
}

TEST_CASE("per-modality: a contiguous block in one group only") {
  PerModalityPolicy pol(Grid{6, 10, 20}, 0.5, default_modality_groups(6));
  Rng rng(15);
  int first = 0;
  for (int i = 0; i < 400; ++i) {
    const Mask m = pol.sample(rng, kEmpty);
    CHECK(m.masked_count() == 15);
    std::set<int> rows;
    for (int t : m.masked_tokens()) rows.insert(t / 10);
    CHECK((rows == std::set<int>{0, 1, 2} || rows == std::set<int>{3, 4, 5}));
    first += rows.count(0) > 0;
    const auto cols = masked_columns(m);
    CHECK(cols.size() == 5u);
    CHECK(cols.back() - cols.front() == 4);
  }
  CHECK(std::abs(first - 200) < 50);
  const auto g = parse_modality_groups("0+2/1-1/3-5", 6);
  CHECK(g == std::vector<std::vector<int>>{{0, 2}, {1}, {3, 4, 5}});
  CHECK(format_modality_groups(g) == "0+2/1/3-5");
  CHECK(parse_modality_groups(format_modality_groups(g), 6) == g);
  CHECK_THROWS_AS(parse_modality_groups("0-6", 6), std::invalid_argument);
  CHECK_THROWS_AS(parse_modality_groups("0-2/2-3", 6), std::invalid_argument);
  CHECK_THROWS_AS(parse_modality_groups("2-0", 6), std::invalid_argument);
  CHECK_THROWS_AS(parse_modality_groups("a", 6), std::invalid_argument);
  CHECK_THROWS_AS(default_modality_groups(1), std::invalid_argument);
}

TEST_CASE("fixed: the same mask; grid checked") {
  Mask m(2, 3);
  m.set(0, 1, true);
  FixedPolicy pol(Grid{2, 3, 4}, m, "cells=010/000");
  Rng rng(1);
  CHECK(pol.sample(rng, kEmpty) == m);
  CHECK_THROWS_AS(FixedPolicy(Grid{3, 3, 4}, m, "x"), std::invalid_argument);
  CHECK_THROWS_AS(FixedPolicy(Grid{2, 3, 4}, Mask(2, 3), "x"), std::invalid_argument);
}

TEST_CASE("same seed, same masks; different seed, different masks") {
  CrossPolicy pol(Grid{6, 10, 20}, 0.75);
  Rng a(99), b(99), c(100);
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    const Mask ma = pol.sample(a, kEmpty);
    CHECK(ma == pol.sample(b, kEmpty));
    differs = differs || ma != pol.sample(c, kEmpty);
  }
  CHECK(differs);
}
