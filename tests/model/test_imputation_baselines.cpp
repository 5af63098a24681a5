#include <doctest/doctest.h>

#include <stdexcept>

#include <cmath>
#include <random>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/model/eval/imputation_baselines.hpp"

using moca::data::Windows;
using moca::masking::Grid;
using moca::masking::Mask;

namespace {

/// n windows of C channels x L samples filled by f(i, c, t).
template <typename F>
Windows make_windows(int n, int C, int L, F f) {
  Windows w;
  w.channels = C;
  w.length = L;
  w.x.resize(n, C * L);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < L; ++t) w.x(i, c * L + t) = static_cast<float>(f(i, c, t));
  w.labels = Eigen::VectorXi::Zero(n);
  w.subjects = Eigen::VectorXi::Zero(n);
  return w;
}

Mask mask_from(const std::string& text) {
  return Mask::parse(text);
}

double max_abs_diff(const moca::data::RowMatrixXf& a, const moca::data::RowMatrixXf& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("missing_samples expands token masks to samples") {
  const Grid grid{2, 3, 4};  // C=2, P=3, Lp=4, L=12
  auto w = make_windows(1, 2, 12, [](int, int, int) { return 0.0; });
  const Mask m = mask_from("010\n100");
  const auto miss = moca::model::missing_samples(w, {m}, grid);
  for (int t = 0; t < 12; ++t) {
    CHECK(miss(0, t) == (t / 4 == 1 ? 1 : 0));
    CHECK(miss(0, 12 + t) == (t / 4 == 0 ? 1 : 0));
  }
  CHECK_THROWS_AS(moca::model::missing_samples(w, {m, m}, grid), std::invalid_argument);
  CHECK_THROWS_AS(moca::model::missing_samples(w, {mask_from("01\n10")}, grid),
                  std::invalid_argument);
  CHECK_THROWS_AS(moca::model::missing_samples(w, {m}, Grid{2, 4, 4}), std::invalid_argument);
}

TEST_CASE("linear interpolation is exact on straight lines inside the observed span") {
  // x(i, c, t) = a_c t + b_i; interior gaps of any length must be recovered exactly.
  for (int P : {4, 5, 8}) {
    const int Lp = 5, L = P * Lp, C = 3;
    auto w = make_windows(4, C, L, [](int i, int c, int t) { return 0.25 * (c + 1) * t - i; });
    const Grid grid{C, P, Lp};
    Mask m(C, P);
    for (int p = 1; p < P - 1; ++p) m.set(p % C, p, true);  // never the first or last column
    m.set(0, 1, true);
    m.set(0, 2, true);  // a two-patch gap
    const auto out = moca::model::impute_linear(w, {m}, grid);
    CHECK(max_abs_diff(out, w.x) < 1e-5);
  }
}

TEST_CASE("linear interpolation repeats the edge value outside the observed span") {
  auto w = make_windows(1, 1, 8, [](int, int, int t) { return t * 1.0; });
  const Grid grid{1, 4, 2};
  const auto out = moca::model::impute_linear(w, {mask_from("1001")}, grid);
  // observed t = 2..5; t = 0,1 take x(2) = 2, t = 6,7 take x(5) = 5.
  const float want[8] = {2, 2, 2, 3, 4, 5, 5, 5};
  for (int t = 0; t < 8; ++t) CHECK(out(0, t) == want[t]);
}

TEST_CASE("nearest neighbour takes the closest observed sample, the earlier one on ties") {
  auto w = make_windows(1, 1, 8, [](int, int, int t) { return t * t; });
  const Grid grid{1, 4, 2};
  // masked t = 2,3 (patch 1) and 6,7 (patch 3); observed 0,1,4,5.
  const auto out = moca::model::impute_nearest(w, {mask_from("0101")}, grid);
  // t=2: nearest observed 1 (d=1) vs 4 (d=2) -> x(1)=1; t=3: 4 (d=1) -> 16; t=6,7 -> x(5)=25.
  const float want[8] = {0, 1, 1, 16, 16, 25, 25, 25};
  for (int t = 0; t < 8; ++t) CHECK(out(0, t) == want[t]);
  // Tie: observed 0 and 4 only around t = 2 (gap of 3 samples 1..3), t = 2 is equidistant.
  auto w2 = make_windows(1, 1, 5, [](int, int, int t) { return 10.0 * t; });
  const auto out2 = moca::model::impute_nearest(w2, {mask_from("01110")}, Grid{1, 5, 1});
  CHECK(out2(0, 1) == 0.0f);
  CHECK(out2(0, 2) == 0.0f);  // tie -> the earlier sample
  CHECK(out2(0, 3) == 40.0f);
}

TEST_CASE("fully missing channels fall back to the channel's observed mean over the set") {
  // Channel 1 is hidden in window 0 and observed (values 3 and 5) in windows 1 and 2.
  auto w = make_windows(3, 2, 4, [](int i, int c, int) { return c == 1 ? 1.0 + 2 * i : 7.0; });
  const Grid grid{2, 2, 2};
  std::vector<Mask> masks = {mask_from("00\n11"), mask_from("00\n00"), mask_from("00\n00")};
  for (const auto& out :
       {moca::model::impute_linear(w, masks, grid), moca::model::impute_nearest(w, masks, grid)}) {
    for (int t = 0; t < 4; ++t) CHECK(std::abs(out(0, 4 + t) - 4.0f) < 1e-6);
  }
}

TEST_CASE("observed samples are copied unchanged by every baseline") {
  auto w = make_windows(5, 3, 20, [](int i, int c, int t) { return std::sin(0.3 * t + i + c); });
  const Grid grid{3, 4, 5};
  std::vector<Mask> masks;
  for (int i = 0; i < 5; ++i) {
    Mask m(3, 4);
    m.set(i % 3, i % 4, true);
    m.set((i + 1) % 3, (i + 2) % 4, true);
    masks.push_back(m);
  }
  const auto miss = moca::model::missing_samples(w, masks, grid);
  for (const auto& out :
       {moca::model::impute_linear(w, masks, grid), moca::model::impute_nearest(w, masks, grid),
        moca::model::impute_mice(w, masks, grid)}) {
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 60; ++j)
        if (!miss(i, j)) CHECK(out(i, j) == w.x(i, j));
  }
}

TEST_CASE("MICE recovers a channel that is an exact linear function of the others") {
  // x0 = sin, x1 = 2 x0 + 1 - 0.5 x2, x2 = cos; only x1 is ever missing, so one regression on
  // fully observed regressors gives the exact relation (up to the 1e-6 relative ridge).
  auto f = [](int i, int c, int t) {
    const double s = std::sin(0.1 * t + 0.7 * i), co = std::cos(0.13 * t - 0.3 * i);
    return c == 0 ? s : c == 2 ? co : 2.0 * s + 1.0 - 0.5 * co;
  };
  auto w = make_windows(20, 3, 30, f);
  const Grid grid{3, 6, 5};
  std::vector<Mask> masks;
  for (int i = 0; i < 20; ++i) {
    Mask m(3, 6);
    m.set(1, i % 6, true);
    m.set(1, (i + 3) % 6, true);
    masks.push_back(m);
  }
  moca::model::MiceOptions o;
  o.posterior = false;
  o.draws = 1;
  const auto out = moca::model::impute_mice(w, masks, grid, o);
  CHECK(max_abs_diff(out, w.x) < 1e-4);
  // With posterior draws the estimate is noisy but near (residual variance is ~0 here), and
  // reproducible per seed.
  o.posterior = true;
  o.draws = 3;
  o.seed = 5;
  const auto a = moca::model::impute_mice(w, masks, grid, o);
  const auto b = moca::model::impute_mice(w, masks, grid, o);
  CHECK(max_abs_diff(a, b) == 0.0);
  CHECK(max_abs_diff(a, w.x) < 1e-3);
}

TEST_CASE("MICE posterior draws depend on the seed and shrink with more draws") {
  // Independent noise channels: the conditional mean of a missing value is the channel mean;
  // averaging more chains moves the imputations towards it.
  moca::Rng rng(3);
  auto w = make_windows(30, 2, 20, [&](int, int, int) { return moca::standard_normal(rng); });
  const Grid grid{2, 4, 5};
  std::vector<Mask> masks(30, mask_from("0110\n0000"));
  moca::model::MiceOptions o;
  o.seed = 1;
  o.draws = 1;
  const auto a = moca::model::impute_mice(w, masks, grid, o);
  o.seed = 2;
  const auto b = moca::model::impute_mice(w, masks, grid, o);
  CHECK(max_abs_diff(a, b) > 0.0);
  auto spread = [&](const moca::data::RowMatrixXf& x) {
    double s = 0.0;
    long n = 0;
    for (int i = 0; i < 30; ++i)
      for (int t = 5; t < 15; ++t, ++n) s += x(i, t) * x(i, t);
    return s / n;
  };
  o.draws = 40;
  const auto many = moca::model::impute_mice(w, masks, grid, o);
  CHECK(spread(many) < 0.25 * spread(a));
}

TEST_CASE("imputation_error averages over masked samples only") {
  auto w = make_windows(1, 1, 4, [](int, int, int t) { return t; });
  moca::data::RowMatrixXf imp = w.x;
  imp(0, 0) += 100.0f;  // visible: ignored
  imp(0, 2) += 1.0f;    // masked
  imp(0, 3) -= 3.0f;    // masked
  const auto e = moca::model::imputation_error(w, imp, {mask_from("01")}, Grid{1, 2, 2});
  CHECK(e.count == 2);
  CHECK(std::abs(e.mae - 2.0) < 1e-12);
  CHECK(std::abs(e.mse - 5.0) < 1e-12);
  CHECK_THROWS_AS(moca::model::imputation_error(w, moca::data::RowMatrixXf(2, 4), {mask_from("01")},
                                                Grid{1, 2, 2}),
                  std::invalid_argument);
}

TEST_CASE("nMSE: MSE over the masked samples / unbiased variance of every value of the windows") {
  // Two windows of two channels x 4 samples, patches of 2; values by hand.
  const double v[2][8] = {{1, 2, 3, 4, 0, -1, 2, 5}, {2, 2, 0, 1, 3, 3, -2, 4}};
  auto w = make_windows(2, 2, 4, [&](int i, int c, int t) { return v[i][c * 4 + t]; });
  moca::data::RowMatrixXf imp = w.x;
  imp(0, 2) = 0.0f;  // window 0, channel 0, patch 1 (masked): errors -3, -4
  imp(0, 3) = 0.0f;
  imp(1, 4) = 1.0f;   // window 1, channel 1, patch 0 (masked): errors -2, 0
  imp(1, 0) = 50.0f;  // visible: not scored
  const std::vector<Mask> masks = {mask_from("01\n00"), mask_from("00\n10")};
  const auto e = moca::model::imputation_error(w, imp, masks, Grid{2, 2, 2});
  // By hand: the 16 values sum to 29, mean 29/16; sum of squares 60 + 47 = 107; unbiased variance
  // (107 - 29^2/16) / 15. MSE = (9 + 16 + 4 + 0) / 4 = 29/4.
  const double var = (107.0 - 29.0 * 29.0 / 16.0) / 15.0;
  CHECK(e.count == 4);
  CHECK(std::abs(e.mse - 29.0 / 4.0) < 1e-12);
  CHECK(std::abs(e.target_var - var) < 1e-12);
  CHECK(std::abs(e.nmse - (29.0 / 4.0) / var) < 1e-12);
  // Constant windows have no variance: nMSE is NaN (written null / "n/a"), never a division by 0.
  auto flat = make_windows(1, 1, 4, [](int, int, int) { return 3.0; });
  moca::data::RowMatrixXf off = flat.x;
  off(0, 3) = 4.0f;
  const auto f = moca::model::imputation_error(flat, off, {mask_from("01")}, Grid{1, 2, 2});
  CHECK(f.target_var == 0.0);
  CHECK(std::isnan(f.nmse));
}

TEST_CASE("nMSE control: imputing the windows' mean scores about 1, the truth 0") {
  moca::Rng rng(17);
  std::normal_distribution<double> noise(2.0, 3.0);
  auto w = make_windows(200, 3, 40, [&](int, int, int) { return noise(rng); });
  const double mean = w.x.cast<double>().mean();
  moca::data::RowMatrixXf imp = w.x;
  std::vector<Mask> masks;
  std::uniform_int_distribution<int> column(0, 9);
  for (int i = 0; i < w.size(); ++i) {
    Mask m(3, 10);
    for (int k = 0; k < 12; ++k) m.set(k % 3, column(rng), true);
    masks.push_back(m);
  }
  for (int i = 0; i < w.size(); ++i)
    for (int c = 0; c < 3; ++c)
      for (int t = 0; t < 40; ++t)
        if (masks[static_cast<size_t>(i)].masked(c, t / 4))
          imp(i, c * 40 + t) = static_cast<float>(mean);
  const auto e = moca::model::imputation_error(w, imp, masks, Grid{3, 10, 4});
  CHECK(e.count > 5000);
  CHECK(std::abs(e.target_var - 9.0) < 0.3);  // the generator's variance 3^2
  CHECK(std::abs(e.nmse - 1.0) < 0.05);
  CHECK(moca::model::imputation_error(w, w.x, masks, Grid{3, 10, 4}).nmse == 0.0);
}

TEST_CASE("MiceOptions validation names the field") {
  moca::model::MiceOptions o;
  o.iterations = 0;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("iterations"), std::invalid_argument);
  o.iterations = 1;
  o.draws = 0;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("draws"), std::invalid_argument);
  o.draws = 1;
  o.ridge = -1;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("ridge"), std::invalid_argument);
}

TEST_CASE("chunked sums: pooled moments and observed channel means add over chunks") {
  std::mt19937_64 gen(11);
  std::normal_distribution<double> normal(3.0, 2.0);
  const Windows w = make_windows(9, 2, 6, [&](int, int c, int) { return normal(gen) + 10 * c; });
  // The unbiased variance of all 108 values, two-pass in long double: the independent answer.
  long double mean = 0, ss = 0;
  for (Eigen::Index k = 0; k < w.x.size(); ++k) mean += w.x.data()[k];
  mean /= w.x.size();
  for (Eigen::Index k = 0; k < w.x.size(); ++k)
    ss += (w.x.data()[k] - mean) * (w.x.data()[k] - mean);
  const double want = static_cast<double>(ss / (w.x.size() - 1));
  moca::model::PooledMoments whole, parts;
  whole.add(w.x);
  CHECK(whole.variance() == moca::model::pooled_variance(w.x));
  CHECK(whole.variance() == doctest::Approx(want).epsilon(1e-13));
  for (const auto& rows :
       {std::vector<int>{0, 1, 2, 3}, std::vector<int>{4}, std::vector<int>{5, 6, 7, 8}})
    parts.add(w.subset(rows).x);
  CHECK(parts.variance() == doctest::Approx(want).epsilon(1e-12));
  CHECK(parts.n == 108.0);
  // Observed channel means: chunk by chunk in order, bit for bit the whole set's, and the
  // fallback of a channel hidden whole.
  const Grid grid{2, 3, 2};
  std::vector<Mask> masks;
  for (int i = 0; i < 9; ++i) masks.push_back(mask_from(i % 3 == 0 ? "111\n000" : "010\n001"));
  moca::model::ObservedChannels all, chunked;
  all.add(w, masks, grid);
  chunked.add(w.subset({0, 1, 2, 3, 4}), {masks.begin(), masks.begin() + 5}, grid);
  chunked.add(w.subset({5, 6, 7, 8}), {masks.begin() + 5, masks.end()}, grid);
  CHECK(chunked.means() == all.means());
  double s0 = 0;
  int n0 = 0;
  for (int i = 0; i < 9; ++i)
    for (int t = 0; t < 6; ++t)
      if (i % 3 != 0 && t / 2 != 1) {
        s0 += w.x(i, t);
        ++n0;
      }
  CHECK(all.means()(0) == doctest::Approx(s0 / n0).epsilon(1e-14));
  // Window 0 hides channel 0 whole: linear interpolation fills it with the fallback given.
  const Eigen::VectorXd fallback = Eigen::Vector2d(-7.0, 5.0);
  const auto imp = moca::model::impute_linear(w, masks, grid, &fallback);
  CHECK(imp(0, 0) == -7.0f);
  const auto own = moca::model::impute_linear(w, masks, grid);  // the control: its own means
  CHECK(own(0, 0) == static_cast<float>(all.means()(0)));
  const Eigen::VectorXd wrong = Eigen::Vector3d(0, 0, 0);
  CHECK_THROWS_AS(moca::model::impute_linear(w, masks, grid, &wrong), std::invalid_argument);
}
