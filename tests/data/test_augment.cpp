#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "moca/data/augment.hpp"
#include "moca/data/npy_windows.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

namespace {

// n windows of C x L whose every value is distinct: x(i, c, t) = i * 10000 + c * 1000 + t.
Windows distinct_windows(int n, int c, int len) {
  Windows w;
  w.channels = c;
  w.length = len;
  w.x.resize(n, c * len);
  w.labels.resize(n);
  w.subjects.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int ch = 0; ch < c; ++ch)
      for (int t = 0; t < len; ++t)
        w.x(i, ch * len + t) = static_cast<float>(i * 10000 + ch * 1000 + t);
    w.labels(i) = i % 7;
    w.subjects(i) = 100 + i;
  }
  for (int ch = 0; ch < c; ++ch) w.channel_names.push_back("c" + std::to_string(ch));
  w.description = "distinct";
  return w;
}

}  // namespace

TEST_CASE("augment: segment length range is [ceil(0.2 L), floor(0.5 L)]") {
  CHECK(splice_length_range(200) == std::pair<int, int>{40, 100});
  CHECK(splice_length_range(2) == std::pair<int, int>{1, 1});
  CHECK(splice_length_range(3) == std::pair<int, int>{1, 1});
  CHECK(splice_length_range(5) == std::pair<int, int>{1, 2});
  CHECK(splice_length_range(6) == std::pair<int, int>{2, 3});   // ceil(1.2) = 2
  CHECK(splice_length_range(10) == std::pair<int, int>{2, 5});  // exact multiples
  CHECK(splice_length_range(11) == std::pair<int, int>{3, 5});  // ceil(2.2) = 3
  CHECK(splice_length_range(250) == std::pair<int, int>{50, 125});
  CHECK(splice_length_range(251) == std::pair<int, int>{51, 125});
  CHECK_THROWS_AS(splice_length_range(1), std::invalid_argument);
  CHECK_THROWS_AS(splice_length_range(0), std::invalid_argument);
}

TEST_CASE("augment: draws cover the whole range uniformly; s1 and s2 are independent") {
  moca::Rng rng(5);
  const int len = 200, draws = 61000;
  std::vector<int> lambda_count(101, 0);
  int s1_zero = 0, s1_max = 0;
  double s_cov = 0, s1_var = 0, s2_var = 0;
  for (int k = 0; k < draws; ++k) {
    const SpliceDraw d = draw_splice(len, rng);
    REQUIRE(d.lambda >= 40);
    REQUIRE(d.lambda <= 100);
    REQUIRE(d.s1 >= 0);
    REQUIRE(d.s2 >= 0);
    REQUIRE(d.s1 <= len - d.lambda);
    REQUIRE(d.s2 <= len - d.lambda);
    ++lambda_count[static_cast<size_t>(d.lambda)];
    s1_zero += d.s1 == 0;
    s1_max += d.s1 == len - d.lambda;
    // centred by their conditional mean (L - lambda) / 2
    const double m = (len - d.lambda) / 2.0;
    s_cov += (d.s1 - m) * (d.s2 - m);
    s1_var += (d.s1 - m) * (d.s1 - m);
    s2_var += (d.s2 - m) * (d.s2 - m);
  }
  // 61 values, 1000 expected each: every count within 5 sigma (sigma ~ 31).
  for (int l = 40; l <= 100; ++l)
    CHECK(std::abs(lambda_count[static_cast<size_t>(l)] - 1000) < 160);
  CHECK(s1_zero > 0);  // both ends of U(0, L - lambda) are reached
  CHECK(s1_max > 0);
  CHECK(std::abs(s_cov / std::sqrt(s1_var * s2_var)) < 0.02);  // 5 sigma for n = 61000
}

TEST_CASE("augment: splice copies x2[:, s2:e2] into x1[:, s1:e1] across all channels") {
  const Windows w = distinct_windows(2, 3, 20);
  RowMatrixXf x1 = w.window(0);
  const SpliceDraw d{6, 3, 11};
  splice(x1, w.window(1), d);
  for (int c = 0; c < 3; ++c) {
    for (int t = 0; t < 20; ++t) {
      const bool inside = t >= 3 && t < 9;
      const float expect = inside ? w.window(1)(c, 11 + (t - 3)) : w.window(0)(c, t);
      CHECK(x1(c, t) == expect);
    }
  }
  // Self-splice (x1 == x2 is allowed) copies the original segment even when ranges overlap.
  RowMatrixXf self = w.window(0);
  splice(self, self, SpliceDraw{5, 2, 4});
  for (int t = 0; t < 20; ++t) {
    const float expect = (t >= 2 && t < 7) ? w.window(0)(0, t + 2) : w.window(0)(0, t);
    CHECK(self(0, t) == expect);
  }
  RowMatrixXf small = RowMatrixXf::Zero(3, 10);
  CHECK(contains(error_text<std::invalid_argument>([&] { splice(small, w.window(1), d); }),
                 "same C and L"));
  CHECK_THROWS_AS(splice(x1, w.window(1), SpliceDraw{6, 15, 0}), std::invalid_argument);
  CHECK_THROWS_AS(splice(x1, w.window(1), SpliceDraw{6, 0, 15}), std::invalid_argument);
  CHECK_THROWS_AS(splice(x1, w.window(1), SpliceDraw{6, -1, 0}), std::invalid_argument);
}

TEST_CASE("augment: synthetic transitions change exactly one contiguous segment, from x2 at s2") {
  const Windows base = distinct_windows(50, 4, 200);
  std::vector<SpliceRecord> rec;
  const Windows out = synthetic_transitions(base, 1000, 42, &rec);
  REQUIRE(out.size() == 1000);
  REQUIRE(rec.size() == 1000);
  CHECK(out.channels == 4);
  CHECK(out.length == 200);
  CHECK(out.channel_names == base.channel_names);
  CHECK(contains(out.description, "Algorithm 1"));
  std::set<int> firsts;
  int same = 0;
  for (int k = 0; k < out.size(); ++k) {
    const SpliceRecord& r = rec[static_cast<size_t>(k)];
    firsts.insert(r.first);
    CHECK(out.labels(k) == base.labels(r.first));      // label stays x1's
    CHECK(out.subjects(k) == base.subjects(r.first));  // subject too
    CHECK(r.draw.lambda >= 40);
    CHECK(r.draw.lambda <= 100);
    if (r.first == r.second) {
      ++same;
      continue;
    }
    // Values encode (window, channel, time): find the changed columns independently of the record.
    const auto x = out.window(k);
    int first_changed = -1, last_changed = -1, changed = 0;
    for (int t = 0; t < 200; ++t) {
      bool col_changed = false;
      for (int c = 0; c < 4; ++c)
        col_changed = col_changed || x(c, t) != base.window(r.first)(c, t);
      if (col_changed) {
        if (first_changed < 0) first_changed = t;
        last_changed = t;
        ++changed;
        // every channel of a changed column comes from x2, time s2 + (t - s1)
        for (int c = 0; c < 4; ++c) {
          CHECK(x(c, t) ==
                static_cast<float>(r.second * 10000 + c * 1000 + (r.draw.s2 + t - first_changed)));
        }
      }
    }
    CHECK(changed == last_changed - first_changed + 1);  // one contiguous segment
    CHECK(changed == r.draw.lambda);
    CHECK(first_changed == r.draw.s1);
  }
  CHECK(same < 60);  // P(x1 == x2) = 1/50
  CHECK(firsts.size() == 50);
  // Reproducible per seed, different across seeds.
  const Windows again = synthetic_transitions(base, 1000, 42);
  CHECK(again.x == out.x);
  CHECK(synthetic_transitions(base, 1000, 43).x != out.x);
  CHECK_THROWS_AS(synthetic_transitions(base, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(synthetic_transitions(Windows{}, 10, 1), std::invalid_argument);
  CHECK_THROWS_WITH_AS(synthetic_transitions(base.subset({0}), 10, 1),
                       doctest::Contains("needs >= 2 windows"), std::invalid_argument);
}

TEST_CASE("augment: on-the-fly batches") {
  const Windows pool = distinct_windows(30, 2, 50);
  RowMatrixXf batch = pool.x.topRows(8);
  const RowMatrixXf orig = batch;
  moca::Rng rng(3);
  CHECK(augment_batch(batch, pool, rng) == 8);
  for (int i = 0; i < 8; ++i) {
    int changed = 0;
    for (int t = 0; t < 50; ++t) changed += batch(i, t) != orig(i, t);
    CHECK(changed >= 0);  // may be 0 only if x2 == x1 and s1 == s2
    CHECK(changed <= 25);
  }
  moca::Rng rng0(3);
  RowMatrixXf keep = orig;
  CHECK(augment_batch(keep, pool, rng0, 0.0) == 0);
  CHECK(keep == orig);
  moca::Rng rng_half(9);
  RowMatrixXf big = pool.x;
  int spliced = 0;
  for (int r = 0; r < 40; ++r) spliced += augment_batch(big, pool, rng_half, 0.5);
  CHECK(std::abs(spliced - 600) < 100);  // 1200 Bernoulli(0.5) trials, sigma ~ 17
  RowMatrixXf wrong = RowMatrixXf::Zero(2, 99);
  CHECK_THROWS_AS(augment_batch(wrong, pool, rng), std::invalid_argument);
  CHECK_THROWS_AS(augment_batch(batch, pool, rng, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(augment_batch(batch, Windows{}, rng), std::invalid_argument);
}

TEST_CASE("augment: offline writing of N samples to .npy with the splice log") {
  const Windows base = distinct_windows(20, 3, 40);
  const std::string dir = moca::data::test::scratch_dir("augment_offline") + "/out";
  const Windows w = write_synthetic_transitions(base, 64, 8, dir);
  const Windows r = read_windows_npy(dir);
  CHECK(r.size() == 64);
  CHECK(r.channels == 3);
  CHECK(r.length == 40);
  CHECK(r.x == w.x);
  CHECK(r.labels == w.labels);
  CHECK(r.subjects == w.subjects);
  std::ifstream csv(dir + "/splices.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  CHECK(lines == 65);
}
