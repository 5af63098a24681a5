#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "moca/common/random.hpp"

TEST_CASE("mt19937_64 output is the standard's (10000th value)") {
  // C++ standard [rand.predef]: the 10000th invocation of a default-constructed mt19937_64
  // produces 9981545732273789042.
  moca::Rng rng;
  std::uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) v = rng();
  CHECK(v == 9981545732273789042ULL);
}

TEST_CASE("uniform_int covers the range evenly and respects bounds") {
  moca::Rng rng(7);
  std::map<long, int> counts;
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const auto v = moca::uniform_int(rng, -2, 3);
    REQUIRE(v >= -2);
    REQUIRE(v <= 3);
    ++counts[v];
  }
  CHECK(counts.size() == 6);
  for (auto& kv : counts) CHECK(std::abs(kv.second - n / 6) < 500);  // ~5 sd
  CHECK_THROWS_AS(moca::uniform_int(rng, 3, 2), std::invalid_argument);
  CHECK(moca::uniform_int(rng, 5, 5) == 5);
}

TEST_CASE("same seed, same numbers; standard_normal has mean 0 and variance 1") {
  moca::Rng a(123), b(123);
  for (int i = 0; i < 100; ++i) CHECK(moca::standard_normal(a) == moca::standard_normal(b));
  moca::Rng r(99);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = moca::standard_normal(r);
    s += z;
    s2 += z * z;
  }
  CHECK(std::abs(s / n) < 0.012);         // 5 sd of the mean
  CHECK(std::abs(s2 / n - 1.0) < 0.016);  // 5 sd of the variance estimate
}

TEST_CASE("shuffle is a permutation and derive_seed separates streams") {
  std::vector<int> v(50);
  for (int i = 0; i < 50; ++i) v[i] = i;
  moca::Rng rng(1);
  moca::shuffle(v, rng);
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) CHECK(sorted[i] == i);
  CHECK(v != sorted);
  CHECK(moca::derive_seed(1, 0) != moca::derive_seed(1, 1));
  CHECK(moca::derive_seed(1, 0) == moca::derive_seed(1, 0));
}
