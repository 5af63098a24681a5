#include <doctest/doctest.h>

#include <stdexcept>

#include "moca/masking/feature_map.hpp"
#include "moca/masking/views.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca::masking::Mask;

namespace {

std::vector<Mask> cross_masks(int n, std::uint64_t seed) {
  moca::Rng rng(seed);
  std::vector<Mask> out;
  for (int i = 0; i < n; ++i) {
    std::vector<int> perm(60);
    for (int t = 0; t < 60; ++t) perm[static_cast<size_t>(t)] = t;
    moca::shuffle(perm, rng);
    Mask m(6, 10);
    for (int k = 0; k < 45; ++k) m.set(perm[static_cast<size_t>(k)], true);
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("each view's features depend on that view's samples only") {
  const EncoderFeatures enc(moca_test::shared_checkpoint());
  CHECK(enc.dim() == 128);
  auto w = moca_test::small_windows(8, 41);
  const auto masks = cross_masks(8, 1);
  const auto f = enc.view_features(w, masks);
  CHECK(f.unmasked.rows() == 8);
  CHECK(f.unmasked.cols() == 128);
  CHECK(f.masked.cols() == 128);
  // Perturb the masked samples: x^U features unchanged, x^M features change.
  auto w2 = w;
  for (int i = 0; i < 8; ++i)
    for (int c = 0; c < 6; ++c)
      for (int t = 0; t < 200; ++t)
        if (masks[static_cast<size_t>(i)].masked(c, t / 20)) w2.x(i, c * 200 + t) += 3.0f;
  const auto g = enc.view_features(w2, masks);
  CHECK((g.unmasked - f.unmasked).cwiseAbs().maxCoeff() == 0.0);
  CHECK((g.masked - f.masked).cwiseAbs().maxCoeff() > 1e-3);
}

TEST_CASE("the encoder plugs into the masking FeatureMap interface") {
  const auto phi = make_encoder_feature_map(moca_test::shared_checkpoint());
  CHECK(phi->name() == "encoder");
  const auto w = moca_test::small_windows(10, 42);
  const auto grid = moca::masking::make_grid(6, 200, 20);
  const auto masks = cross_masks(10, 2);
  auto featurizer = phi->prepare(w, grid);
  const Eigen::MatrixXd u = featurizer->features(masks, moca::masking::ViewSide::kUnmasked);
  const Eigen::MatrixXd m = featurizer->features(masks, moca::masking::ViewSide::kMasked);
  const EncoderFeatures enc(moca_test::shared_checkpoint());
  const auto f = enc.view_features(w, masks);
  CHECK((u - f.unmasked).cwiseAbs().maxCoeff() < 1e-6);
  CHECK((m - f.masked).cwiseAbs().maxCoeff() < 1e-6);
}

TEST_CASE("encoder feature errors") {
  const EncoderFeatures enc(moca_test::shared_checkpoint());
  const auto w = moca_test::small_windows(2, 43);
  CHECK_THROWS_WITH_AS(enc(w, {0}, {{}}), doctest::Contains("no tokens"), std::invalid_argument);
  CHECK_THROWS_AS(enc(w, {0}, {{60}}), std::invalid_argument);
  CHECK_THROWS_AS(enc(w, {0, 1}, {{0}}), std::invalid_argument);
  CHECK_THROWS_AS(EncoderFeatures(moca_test::temp_path("missing.pt")), std::runtime_error);
}
