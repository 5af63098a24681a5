#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "rank_correlation.hpp"
#include "study_statistics.hpp"

using namespace moca::sim;

namespace {

// The data of the partial-correlation and within-group tests (8 policies, 3 ratio groups).
const std::vector<double> kX = {3.1, 1.2, 4.8, 2.2, 5.9, 0.7, 4.1, 3.3};
const std::vector<double> kY = {2.0, 1.5, 3.9, 3.1, 4.4, 0.2, 2.8, 4.0};
const std::vector<double> kZ = {0.5, 0.5, 0.75, 0.75, 0.9, 0.5, 0.9, 0.75};

std::vector<PolicyData> make_policies(const std::vector<double>& score,
                                      const std::vector<std::vector<double>>& outcomes) {
  std::vector<PolicyData> p(score.size());
  for (size_t i = 0; i < score.size(); ++i) {
    p[i].policy = "p" + std::to_string(i);
    p[i].family = "f";
    p[i].ratio = static_cast<double>(i % 3);
    p[i].group = std::to_string(i % 3);
    p[i].score = score[i];
    p[i].outcomes = outcomes[i];
  }
  return p;
}

}  // namespace

TEST_CASE("partial Spearman: scipy's value and the residual method") {
  // scipy: ranks (scipy.stats.rankdata), OLS residuals of rank x and rank y on rank z, their
  // Pearson correlation = 0.578004787333356; spearmanr(x, y) = 0.8333..., (x, z) 0.80632...,
  // (y, z) 0.75593...
  CHECK(std::abs(spearman(kX, kY) - 0.8333333333333335) < 1e-12);
  CHECK(std::abs(partial_spearman(kX, kY, kZ) - 0.578004787333356) < 1e-12);
  // By hand: x = (1, 2, 3, 4), y = (1, 2, 4, 3), z = (2, 4, 1, 3): r_xy = 1 - 6*2/60 = 0.8,
  // r_xz = 1 - 6*10/60 = 0, r_yz = 1 - 6*14/60 = -0.4, so the partial is 0.8 / sqrt(0.84).
  CHECK(std::abs(partial_spearman({1, 2, 3, 4}, {1, 2, 4, 3}, {2, 4, 1, 3}) -
                 0.8 / std::sqrt(0.84)) < 1e-12);
  // Controlling for x itself is degenerate (r_xz = 1).
  bool deg = false;
  CHECK(partial_spearman(kX, kY, kX, &deg) == 0.0);
  CHECK(deg);
  CHECK_THROWS_AS(partial_spearman({1, 2, 3}, {1, 2, 3}, {1, 2, 3}), std::invalid_argument);
  CHECK_THROWS_AS(partial_spearman(kX, kY, {1, 2}), std::invalid_argument);
}

TEST_CASE("within-group Kendall: hand count") {
  // Group 0.5 (rows 0, 1, 5): 3 concordant; 0.75 (rows 2, 3, 7): 2 concordant, 1 discordant;
  // 0.9 (rows 4, 6): 1 concordant. tau = (6 - 1) / 7.
  std::vector<std::string> g;
  for (double z : kZ) g.push_back(std::to_string(z));
  CHECK(std::abs(within_group_kendall(kX, kY, g) - 5.0 / 7.0) < 1e-15);
  bool deg = false;
  CHECK(within_group_kendall({1, 2, 3}, {3, 2, 1}, {"a", "b", "c"}, &deg) == 0.0);
  CHECK(deg);  // no within-group pair at all
}

TEST_CASE("between-seed SD and paired differences (Student t, hand values)") {
  CHECK(std::abs(sample_sd({1, 2, 3}) - 1.0) < 1e-15);
  CHECK(sample_sd({5}) == 0.0);
  // a - b = (1, 2, 3): mean 2, sd 1, t_{0.975, 2} = 4.302652729911275 (scipy.stats.t.ppf).
  const PairedDifferenceCI d = paired_difference({11, 12, 13}, {10, 10, 10});
  CHECK(d.n == 3);
  CHECK(std::abs(d.mean - 2.0) < 1e-15);
  CHECK(std::abs(d.sd - 1.0) < 1e-15);
  const double half = 4.302652729911275 / std::sqrt(3.0);
  CHECK(std::abs(d.ci_low - (2.0 - half)) < 1e-9);
  CHECK(std::abs(d.ci_high - (2.0 + half)) < 1e-9);
  CHECK_THROWS_AS(paired_difference({1}, {2}), std::invalid_argument);
  CHECK_THROWS_AS(paired_difference({1, 2}, {2}), std::invalid_argument);
}

TEST_CASE("smallest detectable rho (Fisher z, scipy values) and the verdict rule") {
  // tanh((norm.ppf(0.975) + norm.ppf(0.8)) * sqrt(1.06 / (n - 3))) computed with scipy.
  CHECK(std::abs(smallest_detectable_rho(21) - 0.5914294190237) < 1e-9);
  CHECK(std::abs(smallest_detectable_rho(8) - 0.8591125797270679) < 1e-9);
  CHECK_THROWS_AS(smallest_detectable_rho(3), std::invalid_argument);
  BootstrapEstimate e;
  e.resamples = 100;
  e.value = -0.7;
  e.ci_low = -0.9;
  e.ci_high = -0.2;
  CHECK(verdict(e, -1, 0.59) == "predicts");
  CHECK(verdict(e, -1, 1.0) == "cannot tell at this power");  // e.g. 3 policies
  CHECK(verdict(e, +1, 0.59) == "does not predict");          // opposite sign, CI excludes 0
  e.ci_low = -0.3;
  e.ci_high = 0.4;
  CHECK(verdict(e, -1, 0.59) == "does not predict");  // |rho| in the predicted direction < 0.59
  e.ci_low = -0.8;
  CHECK(verdict(e, -1, 0.59) == "cannot tell at this power");
  e.degenerate = true;
  CHECK(verdict(e, -1, 0.59) == "cannot tell at this power");
  CHECK_THROWS_AS(verdict(e, 0, 0.5), std::invalid_argument);
}

TEST_CASE("two-level bootstrap: perfectly monotone data give rho = tau = 1") {
  // 10 policies, 3 seeds, outcome increasing in the score.
  std::vector<double> score;
  std::vector<std::vector<double>> same, noisy;
  for (int i = 0; i < 10; ++i) {
    score.push_back(0.5 + 0.04 * i);
    same.push_back({2.0 * i, 2.0 * i, 2.0 * i});  // no seed noise
    noisy.push_back({2.0 * i, 2.0 * i + 0.05, 2.0 * i - 0.03});
  }
  // Without seed noise every resample is a monotone relation (a policy drawn twice is a tie in
  // both variables): the interval is exactly [1, 1].
  for (const auto& stat : {spearman_statistic(), kendall_statistic()}) {
    const BootstrapEstimate e = two_level_bootstrap(make_policies(score, same), stat, 300, 7);
    CHECK(e.value == 1.0);
    CHECK(e.ci_low == 1.0);
    CHECK(e.ci_high == 1.0);
    CHECK(e.resamples == 300);
  }
  // With seed noise far below the policy spacing the estimate is still exactly 1; only a policy
  // drawn twice (same score, different seed draws: a tie in x only) pulls a resample below 1.
  auto p = make_policies(score, noisy);
  for (auto& q : p) q.score_se = 1e-4;  // far below the score spacing
  for (const auto& stat : {spearman_statistic(), kendall_statistic()}) {
    const BootstrapEstimate e = two_level_bootstrap(p, stat, 300, 7);
    CHECK(e.value == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(e.ci_high <= 1.0);
    CHECK(e.ci_low > 0.8);
  }
  // Decreasing outcomes: -1, and the verdict for a predicted negative sign is "predicts".
  for (auto& q : p)
    for (auto& v : q.outcomes) v = -v;
  const BootstrapEstimate e = two_level_bootstrap(p, spearman_statistic(), 300, 7);
  CHECK(e.value == doctest::Approx(-1.0).epsilon(1e-15));
  CHECK(e.ci_high < -0.8);
  CHECK(verdict(e, -1, smallest_detectable_rho(10)) == "predicts");
  CHECK(verdict(e, +1, smallest_detectable_rho(10)) == "does not predict");
}

TEST_CASE("two-level bootstrap: independent data give CIs that cover 0 (19 of 20 expected)") {
  int covered = 0, predicts = 0;
  for (std::uint64_t rep = 0; rep < 20; ++rep) {
    moca::Rng rng(moca::derive_seed(123, rep));
    std::vector<double> score;
    std::vector<std::vector<double>> y;
    for (int i = 0; i < 21; ++i) {
      score.push_back(moca::standard_normal(rng));
      const double mu = moca::standard_normal(rng);
      y.push_back({mu + 0.3 * moca::standard_normal(rng), mu + 0.3 * moca::standard_normal(rng),
                   mu + 0.3 * moca::standard_normal(rng)});
    }
    auto p = make_policies(score, y);
    const BootstrapEstimate e = two_level_bootstrap(p, spearman_statistic(), 400, rep);
    CHECK(e.ci_low <= e.value);
    CHECK(e.value <= e.ci_high);
    if (e.ci_low <= 0.0 && 0.0 <= e.ci_high) ++covered;
    if (verdict(e, -1, smallest_detectable_rho(21)) == "predicts") ++predicts;
  }
  CHECK(covered >= 17);  // binomial(20, 0.95): P(covered < 17) < 2 %
  CHECK(predicts <= 2);
}

TEST_CASE("two-level bootstrap: seeded, seed noise widens the interval, bad input") {
  std::vector<double> score = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::vector<double>> quiet, noisy;
  for (int i = 0; i < 8; ++i) {
    quiet.push_back({i + 0.01, i - 0.01});
    noisy.push_back({i + 4.0, i - 4.0});  // seed SD far above the policy spacing
  }
  const auto a = two_level_bootstrap(make_policies(score, quiet), spearman_statistic(), 500, 1);
  const auto b = two_level_bootstrap(make_policies(score, quiet), spearman_statistic(), 500, 1);
  const auto c = two_level_bootstrap(make_policies(score, noisy), spearman_statistic(), 500, 1);
  CHECK(a.ci_low == b.ci_low);
  CHECK(a.ci_high == b.ci_high);
  CHECK(c.ci_high - c.ci_low > a.ci_high - a.ci_low + 0.2);
  CHECK(a.value == doctest::Approx(1.0));
  CHECK(c.value == doctest::Approx(1.0));  // the means are still ordered
  auto p = make_policies(score, quiet);
  p[2].outcomes.clear();
  CHECK_THROWS_AS(two_level_bootstrap(p, spearman_statistic(), 500, 1), std::invalid_argument);
  p = make_policies(score, quiet);
  p[1].outcomes[0] = NAN;
  CHECK_THROWS_AS(two_level_bootstrap(p, spearman_statistic(), 500, 1), std::invalid_argument);
  CHECK_THROWS_AS(two_level_bootstrap(make_policies(score, quiet), spearman_statistic(), 50, 1),
                  std::invalid_argument);
  // A constant score: degenerate, no CI.
  const auto d = two_level_bootstrap(make_policies({1, 1, 1, 1}, {{1}, {2}, {3}, {4}}),
                                     spearman_statistic(), 200, 1);
  CHECK(d.degenerate);
  CHECK(d.resamples == 0);
}
