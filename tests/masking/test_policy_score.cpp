// Tests for policy_score.hpp: intervals and paired tests against closed forms, the null level
// on independent data, the cross-modal part against the generator's coupling, reproducibility,
// shared masks, the kcca estimator and error paths.
#include <doctest/doctest.h>

#include <cmath>

#include "moca/data/synthetic.hpp"
#include "moca/masking/detail/token_grams.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"

using namespace moca;
using namespace moca::masking;

namespace {
// Student t CDF with 3 degrees of freedom in closed form (independent of Boost).
double t3_cdf(double t) {
  return 0.5 + (t / (std::sqrt(3.0) * (1 + t * t / 3)) + std::atan(t / std::sqrt(3.0))) / M_PI;
}

data::Windows noise_windows(int n, std::uint64_t seed) {
  data::Windows w;
  w.channels = 6;
  w.length = 200;
  w.channel_names = {"a", "b", "c", "d", "e", "f"};
  w.x.resize(n, 1200);
  Rng rng(seed);
  for (int i = 0; i < n; ++i) {
    // A large constant offset (gravity-like) on independent cells: with per-window masks it
    // would leak into the score through the mask indicators if features were not centred.
    for (int j = 0; j < 1200; ++j) w.x(i, j) = static_cast<float>(5.0 + standard_normal(rng));
  }
  w.labels = Eigen::VectorXi::Constant(n, -1);
  w.subjects = Eigen::VectorXi::Constant(n, -1);
  return w;
}
}  // namespace

TEST_CASE("estimator and mask-mode names round-trip; a bad name lists the choices") {
  CHECK(parse_enum(kEstimatorNames, to_string(Estimator::kKcca), "estimator") == Estimator::kKcca);
  CHECK(parse_enum(kMaskModeNames, to_string(MaskMode::kShared), "mask mode") == MaskMode::kShared);
  CHECK(to_string(MaskMode::kPerWindow) == "per-window");
  CHECK_THROWS_WITH_AS(parse_enum(kEstimatorNames, "pls", "estimator"),
                       "estimator (pls) must be one of: cca, kcca", std::invalid_argument);
}

TEST_CASE("mean_interval and compare_scores against closed forms") {
  const auto mi = mean_interval({1, 2, 3, 4});
  CHECK(std::abs(mi.mean - 2.5) < 1e-12);
  const double se = std::sqrt(5.0 / 3.0 / 4.0);
  CHECK(std::abs(mi.std_error - se) < 1e-12);
  CHECK(std::abs(mi.ci_high - (2.5 + 3.182446305284263 * se)) < 1e-9);  // t_{0.975, 3}
  CHECK(std::abs(mi.ci_low - (2.5 - 3.182446305284263 * se)) < 1e-9);
  CHECK_THROWS_AS(mean_interval({1.0}), std::invalid_argument);

  PolicyScore a, b;
  a.scheme = "a";
  b.scheme = "b";
  a.values = {2, 4, 6, 8};
  b.values = {1, 2, 3, 4};  // differences 1, 2, 3, 4
  a.spec = "a:ratio=0.5";
  b.spec = "a:ratio=0.25";
  const auto c = compare_scores(a, b);
  CHECK(c.a == "a:ratio=0.5");  // specs tell two settings of one scheme apart
  CHECK(c.b == "a:ratio=0.25");
  CHECK(std::abs(c.difference - 2.5) < 1e-12);
  const double t = 2.5 / se;
  CHECK(std::abs(c.p_value - 2 * (1 - t3_cdf(t))) < 1e-9);
  const auto same = compare_scores(a, a);
  CHECK(same.difference == 0.0);
  CHECK(same.p_value == 1.0);
  PolicyScore shifted = a;
  for (auto& v : shifted.values) v += 1;
  CHECK(compare_scores(shifted, a).p_value == 0.0);  // constant nonzero difference
  b.values.pop_back();
  CHECK_THROWS_AS(compare_scores(a, b), std::invalid_argument);
}

TEST_CASE("independent cells: the score sits at the null level (no mask leak)") {
  const auto w = noise_windows(400, 1);
  const Grid grid = make_grid(6, 200, 20);
  ScoreOptions o;
  o.pca = 10;
  o.draws = 4;
  for (std::string fm : {"raw", "patch-mean", "rff-mean"}) {
    PolicyScorer scorer(w, grid, make_feature_map(fm), o);
    for (std::string spec : {"cross", "sync"}) {
      const auto s = scorer.score(*make_policy(spec, grid));
      MESSAGE(fm << " " << spec << ": " << s.mean << " null " << s.null_level);
      CHECK(std::abs(s.null_level - 0.3122) < 1e-3);  // Wachter edge (10, 10, 400)
      CHECK(std::abs(s.mean - s.null_level) < 0.07);
    }
  }
}

TEST_CASE("why features are centred: an uncentred zero-filled view leaks the mask pattern") {
  // The same independent cells with offset 5, through a callback that zero-fills without
  // centring: x^U + x^M = x and the offset makes cell (c,p) of x^U ~ 5 (1 - m) and of x^M ~ 5 m,
  // so CCA recovers the complementary mask indicators and reports ~1 with no dependence at all.
  const auto w = noise_windows(400, 1);
  const Grid grid = make_grid(6, 200, 20);
  auto uncentred = std::make_shared<CallbackFeatureMap>(
      "uncentred-raw", [](const data::Windows& ws, const std::vector<int>& rows,
                          const std::vector<std::vector<int>>& tokens) {
        Eigen::MatrixXd out = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), 1200);
        for (size_t k = 0; k < rows.size(); ++k)
          for (int t : tokens[k])
            for (int s = 0; s < 20; ++s) {
              const int col = (t / 10) * 200 + (t % 10) * 20 + s;
              out(static_cast<Eigen::Index>(k), col) = ws.x(rows[k], col);
            }
        return out;
      });
  ScoreOptions o;
  o.pca = 10;
  o.draws = 2;
  const auto s = PolicyScorer(w, grid, uncentred, o).score(*make_policy("cross", grid));
  MESSAGE("uncentred raw on independent cells: " << s.mean << " (null " << s.null_level << ")");
  CHECK(s.mean > 0.9);
}

TEST_CASE("cross-modal part: at the null level without coupling, rising with coupling") {
  const Grid grid = make_grid(6, 200, 20);
  ScoreOptions o;
  o.pca = 10;
  o.draws = 3;
  o.unmasked_channels = {0, 1, 2};
  o.masked_channels = {3, 4, 5};
  for (std::string fm : {"raw", "patch-mean"}) {
    std::vector<double> scores;
    double null = 0;
    for (double coupling : {0.0, 0.5, 1.0}) {
      data::SyntheticOptions so;
      so.windows = 400;
      so.coupling = coupling;
      so.seed = 3;
      const auto w = data::generate_synthetic(so);
      PolicyScorer scorer(w, grid, make_feature_map(fm), o);
      const auto s = scorer.score(*make_policy("cross", grid));
      scores.push_back(s.mean);
      null = s.null_level;
      MESSAGE(fm << " coupling " << coupling << ": cross-modal " << s.mean << " null "
                 << s.null_level);
    }
    CHECK(std::abs(scores[0] - null) < 0.07);
    CHECK(scores[1] > scores[0] + 0.1);
    CHECK(scores[2] > scores[1] + 0.05);
  }
}

TEST_CASE("same seed, same values; another seed, other values; shared masks") {
  data::SyntheticOptions so;
  so.windows = 200;
  const auto w = data::generate_synthetic(so);
  const Grid grid = make_grid(6, 200, 20);
  ScoreOptions o;
  o.pca = 5;
  o.draws = 3;
  o.seed = 11;
  auto cross = make_policy("cross", grid);
  int calls = 0, last = 0;
  const auto a = PolicyScorer(w, grid, nullptr, o).score(*cross, [&](int done, int total) {
    ++calls;
    CHECK(total == 3);
    CHECK(done == last + 1);
    last = done;
  });
  CHECK(calls == 3);
  const auto b = PolicyScorer(w, grid, nullptr, o).score(*cross);
  CHECK(a.values == b.values);
  o.seed = 12;
  const auto c = PolicyScorer(w, grid, nullptr, o).score(*cross);
  CHECK(a.values != c.values);
  CHECK(std::abs(a.mean_masked_fraction - 0.75) < 1e-12);

  o.mask_mode = MaskMode::kShared;
  PolicyScorer shared(w, grid, nullptr, o);
  const auto masks = shared.draw_masks(*cross, 0);
  CHECK(masks.size() == 1u);
  CHECK(shared.draw_masks(*cross, 0) == masks);
  CHECK(shared.draw_masks(*cross, 1) != masks);
}

TEST_CASE("kcca estimator: values in [0, 1], null by permutation") {
  data::SyntheticOptions so;
  so.windows = 80;
  const auto w = data::generate_synthetic(so);
  const Grid grid = make_grid(6, 200, 20);
  ScoreOptions o;
  o.estimator = Estimator::kKcca;
  o.draws = 2;
  o.gamma = 1.0;
  PolicyScorer scorer(w, grid, make_feature_map("patch-mean"), o);
  const auto s = scorer.score(*make_policy("cross", grid));
  CHECK(s.mean > 0.0);
  CHECK(s.mean <= 1.0);
  CHECK(s.null_level >= 0.0);
  CHECK(s.null_level < s.mean);
}

TEST_CASE("policy scoring: errors") {
  data::SyntheticOptions so;
  so.windows = 20;
  const auto w = data::generate_synthetic(so);
  const Grid grid = make_grid(6, 200, 20);
  ScoreOptions o;
  o.draws = 1;
  CHECK_THROWS_AS(PolicyScorer(w, grid, nullptr, o), std::invalid_argument);
  o.draws = 2;
  o.gamma = 0;
  CHECK_THROWS_AS(PolicyScorer(w, grid, nullptr, o), std::invalid_argument);
  o.gamma = 0.1;
  o.unmasked_channels = {7};
  CHECK_THROWS_AS(PolicyScorer(w, grid, nullptr, o), std::invalid_argument);
  o.unmasked_channels = {0};
  auto cb = std::make_shared<CallbackFeatureMap>(
      "enc",
      [](const data::Windows&, const std::vector<int>& rows, const std::vector<std::vector<int>>&) {
        return Eigen::MatrixXd::Ones(static_cast<Eigen::Index>(rows.size()), 2);
      });
  CHECK_THROWS_AS(PolicyScorer(w, grid, cb, o), std::invalid_argument);
  o.unmasked_channels.clear();
  PolicyScorer scorer(w, grid, nullptr, o);
  auto other = make_policy("cross", make_grid(6, 200, 40));
  CHECK_THROWS_AS(scorer.score(*other), std::runtime_error);
}

TEST_CASE("per-token Grams: equal to the Gram of the centred zero-filled view") {
  // n = 70: two full 32-row tiles and a partial one; 12 tokens of width 5.
  const int n = 70, T = 12, w = 5;
  Rng rng(5);
  Eigen::MatrixXd Z(n, T * w);
  for (Eigen::Index j = 0; j < Z.cols(); ++j)
    for (Eigen::Index i = 0; i < n; ++i) Z(i, j) = 3.0 * (j % 3) + standard_normal(rng);
  std::vector<Eigen::MatrixXd> in_view(3, Eigen::MatrixXd(n, T));
  for (auto& a : in_view)
    for (Eigen::Index t = 0; t < T; ++t)
      for (Eigen::Index i = 0; i < n; ++i) a(i, t) = uniform01(rng) < 0.4 ? 1.0 : 0.0;
  in_view[2].setOnes();  // the full view: the plain centred Gram
  std::vector<Eigen::MatrixXd> g1, g2;
  detail::token_masked_grams(Z, T, in_view, 1, g1);
  detail::token_masked_grams(Z, T, in_view, 2, g2);
  REQUIRE(g1.size() == 3u);
  for (int v = 0; v < 3; ++v) {
    Eigen::MatrixXd X = Z;
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index t = 0; t < T; ++t)
        X.row(i).segment(t * w, w) *= in_view[static_cast<size_t>(v)](i, t);
    X.rowwise() -= X.colwise().mean();
    const Eigen::MatrixXd G = X * X.transpose();
    CHECK((g1[static_cast<size_t>(v)] - G).cwiseAbs().maxCoeff() < 1e-11 * G.cwiseAbs().maxCoeff());
    CHECK(g1[static_cast<size_t>(v)] == g2[static_cast<size_t>(v)]);  // thread count: same bits
  }
  CHECK_THROWS_AS(detail::token_masked_grams(Z, 7, in_view, 1, g1), std::invalid_argument);
  in_view[0].resize(n, T - 1);
  CHECK_THROWS_AS(detail::token_masked_grams(Z, T, in_view, 1, g1), std::invalid_argument);
}

TEST_CASE("score() through per-token Grams equals score_masks() on the features, draw by draw") {
  // score() takes the per-token Gram route for cca on raw features whenever both views have
  // >= n columns; score_masks() builds the feature matrices and calls linear_cca on them.
  data::SyntheticOptions so;
  so.windows = 150;
  so.seed = 4;
  const auto w = data::generate_synthetic(so);
  const Grid grid = make_grid(6, 200, 20);
  struct Case {
    const char* policy;
    MaskMode mode;
    bool cross_modal;
    double ridge;
  };
  for (const Case& c : {Case{"cross", MaskMode::kPerWindow, false, 0.0},
                        Case{"sync", MaskMode::kPerWindow, false, 0.0},
                        Case{"cross", MaskMode::kShared, false, 0.0},
                        Case{"cross", MaskMode::kPerWindow, true, 0.0},
                        Case{"cross", MaskMode::kPerWindow, false, 0.5}}) {
    ScoreOptions o;
    o.pca = 8;
    o.draws = 5;
    o.seed = 9;
    o.mask_mode = c.mode;
    o.ridge = c.ridge;
    if (c.cross_modal) {
      o.unmasked_channels = {0, 1, 2};
      o.masked_channels = {3, 4, 5};
    }
    PolicyScorer scorer(w, grid, nullptr, o);
    const auto policy = make_policy(c.policy, grid);
    const auto s = scorer.score(*policy);
    o.threads = 1;
    const auto s1 = PolicyScorer(w, grid, nullptr, o).score(*policy);
    // The Grams do not depend on the thread count (checked above); the eigensolver's BLAS
    // calls may split differently, so the values agree to rounding.
    for (int r = 0; r < o.draws; ++r)
      CHECK(std::abs(s1.values[static_cast<size_t>(r)] - s.values[static_cast<size_t>(r)]) < 1e-12);
    for (int r = 0; r < o.draws; ++r) {
      double null = 0.0;
      const double direct = scorer.score_masks(scorer.draw_masks(*policy, r), &null);
      INFO(c.policy << " draw " << r << ": " << s.values[static_cast<size_t>(r)] << " vs "
                    << direct);
      CHECK(std::abs(s.values[static_cast<size_t>(r)] - direct) < 1e-10);
      CHECK(s.null_values[static_cast<size_t>(r)] == null);
    }
  }
}
