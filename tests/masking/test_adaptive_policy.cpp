// Tests for adaptive_policy.hpp: beta = 0 is uniform over the candidates, large beta picks the
// best candidate, counts follow the base policy, spec round trip, errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "moca/data/synthetic.hpp"
#include "moca/masking/adaptive_policy.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"

using namespace moca;
using namespace moca::masking;

namespace {
data::Windows pilot_windows() {
  data::SyntheticOptions so;
  so.windows = 60;
  so.seed = 2;
  return data::generate_synthetic(so);
}
}  // namespace

TEST_CASE("adaptive: probabilities, counts, Phi equals the scorer's shared-mask score") {
  const auto w = pilot_windows();
  const Grid grid = make_grid(6, 200, 20);
  PolicyContext ctx;
  ctx.pilot = &w;
  auto p0 = make_policy("adaptive:beta=0,candidates=8,pca=5", grid, ctx);
  const auto& a0 = dynamic_cast<const AdaptivePolicy&>(*p0);
  REQUIRE(a0.candidates().size() == 8u);
  for (double p : a0.probabilities()) CHECK(std::abs(p - 0.125) < 1e-12);
  // Candidates are the base policy's first 8 draws from stream derive_seed(0, 0).
  auto base = make_policy("cross:ratio=0.75", grid);
  Rng rng(derive_seed(0, 0));
  for (const auto& m : a0.candidates()) {
    CHECK(m == base->sample(rng, w.window(0)));
    CHECK(m.masked_count() == 45);
  }
  // Phi(m) = sigma_1 of the fixed mask on the pilot windows (independent scorer).
  ScoreOptions so;
  so.mask_mode = MaskMode::kShared;
  so.pca = 5;
  PolicyScorer scorer(w, grid, nullptr, so);
  for (size_t k = 0; k < 8; ++k)
    CHECK(std::abs(a0.scores()[k] - scorer.score_masks({a0.candidates()[k]})) < 1e-12);

  auto p1 = make_policy("adaptive:beta=1000,candidates=8,pca=5", grid, ctx);
  const auto& a1 = dynamic_cast<const AdaptivePolicy&>(*p1);
  const size_t best = static_cast<size_t>(std::max_element(a1.scores().begin(), a1.scores().end()) -
                                          a1.scores().begin());
  for (size_t k = 0; k < 8; ++k) {
    CHECK(a1.probabilities()[k] <= a1.probabilities()[best]);
    if (a1.scores()[k] < a1.scores()[best] - 0.01) CHECK(a1.probabilities()[k] < 1e-4);
  }
  Rng r2(5);
  int hits = 0;
  const int N = 2000;
  for (int i = 0; i < N; ++i) hits += p1->sample(r2, w.window(0)) == a1.candidates()[best];
  CHECK(std::abs(static_cast<double>(hits) / N - a1.probabilities()[best]) < 0.05);
  // beta = 20: probabilities follow exp(beta Phi).
  auto p2 = make_policy("adaptive:beta=20,candidates=8,pca=5", grid, ctx);
  const auto& a2 = dynamic_cast<const AdaptivePolicy&>(*p2);
  for (size_t k = 1; k < 8; ++k) {
    const double ratio = a2.probabilities()[k] / a2.probabilities()[0];
    CHECK(std::abs(std::log(ratio) - 20 * (a2.scores()[k] - a2.scores()[0])) < 1e-9);
  }
}

TEST_CASE("adaptive: base options, spec round trip, errors") {
  const auto w = pilot_windows();
  const Grid grid = make_grid(6, 200, 20);
  PolicyContext ctx;
  ctx.pilot = &w;
  auto p = make_policy("adaptive:base=sync,ratio=0.5,candidates=4,pca=3,beta=5", grid, ctx);
  CHECK(p->spec() ==
        "adaptive:base=sync,beta=5,candidates=4,seed=0,pilot=256,pca=3,features=raw,ratio=0.5,"
        "count=keep-floor");
  auto q = make_policy(p->spec(), grid, ctx);
  CHECK(q->spec() == p->spec());
  Rng r1(1), r2(1);
  for (int i = 0; i < 5; ++i) {
    const Mask m = p->sample(r1, w.window(0));
    CHECK(m == q->sample(r2, w.window(0)));
    CHECK(m.masked_count() == 30);  // sync: 5 columns x 6 channels
  }
  CHECK_THROWS_AS(make_policy("adaptive", grid), std::invalid_argument);  // no pilot
  CHECK_THROWS_AS(make_policy("adaptive:base=adaptive", grid, ctx), std::invalid_argument);
  CHECK_THROWS_AS(make_policy("adaptive:beta=-1", grid, ctx), std::invalid_argument);
  CHECK_THROWS_AS(make_policy("adaptive:candidates=0", grid, ctx), std::invalid_argument);
  CHECK_THROWS_AS(make_policy("adaptive:base=sensor,ratio=0.5", grid, ctx),
                  std::invalid_argument);  // sensor takes keep, not ratio
  CHECK_THROWS_AS(make_policy("adaptive:features=encoder", grid, ctx), std::invalid_argument);
}
