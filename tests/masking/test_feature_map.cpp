// Tests for feature_map.hpp: raw and patch-mean against hand computations, shared masks,
// callback batching and tokens, error paths.
#include <doctest/doctest.h>

#include <cmath>

#include "moca/masking/feature_map.hpp"
#include "moca/masking/policies.hpp"

using namespace moca;
using namespace moca::masking;

namespace {
data::Windows small_windows(int n, const Grid& g, std::uint64_t seed) {
  data::Windows w;
  w.channels = g.channels;
  w.length = g.length();
  for (int c = 0; c < g.channels; ++c) w.channel_names.push_back("ch" + std::to_string(c));
  w.x.resize(n, g.channels * g.length());
  Rng rng(seed);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < w.x.cols(); ++j) w.x(i, j) = static_cast<float>(standard_normal(rng) + 3);
  w.labels = Eigen::VectorXi::Constant(n, -1);
  w.subjects = Eigen::VectorXi::Constant(n, -1);
  return w;
}

// Independent standardisation: z = (x - column mean) / pooled channel sd.
Eigen::MatrixXd standardised(const data::Windows& w) {
  const int n = w.size(), C = w.channels, L = w.length;
  Eigen::MatrixXd z(n, C * L);
  for (int j = 0; j < C * L; ++j) {
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += w.x(i, j);
    mean /= n;
    for (int i = 0; i < n; ++i) z(i, j) = w.x(i, j) - mean;
  }
  for (int c = 0; c < C; ++c) {
    double ss = 0;
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < L; ++t) ss += z(i, c * L + t) * z(i, c * L + t);
    const double sd = std::sqrt(ss / (n * L));
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < L; ++t) z(i, c * L + t) /= sd;
  }
  return z;
}
}  // namespace

TEST_CASE("raw: zero-filled standardised views that add up to z") {
  const Grid g{3, 4, 5};
  const auto w = small_windows(7, g, 1);
  const auto f = make_feature_map("raw")->prepare(w, g);
  CHECK(f->dim() == 60);
  CHECK(f->size() == 7);
  CrossPolicy pol(g, 0.5);
  Rng rng(2);
  std::vector<Mask> masks;
  for (int i = 0; i < 7; ++i) masks.push_back(pol.sample(rng, w.window(i)));
  const auto U = f->features(masks, ViewSide::kUnmasked);
  const auto M = f->features(masks, ViewSide::kMasked);
  const auto z = standardised(w);
  CHECK((U + M - z).cwiseAbs().maxCoeff() < 1e-6);
  for (int i = 0; i < 7; ++i)
    for (int c = 0; c < 3; ++c)
      for (int t = 0; t < 20; ++t)
        if (masks[static_cast<size_t>(i)].masked(c, t / 5)) CHECK(U(i, c * 20 + t) == 0.0);
}

TEST_CASE("patch-mean: equals the definition computed by hand") {
  const Grid g{2, 3, 2};
  const auto w = small_windows(5, g, 3);
  const auto f = make_feature_map("patch-mean")->prepare(w, g);
  const int d0 = 3 * (2 + 1);
  CHECK(f->dim() == 2 * d0);
  const auto z = standardised(w);
  // psi for every window and token, then centre per token over windows.
  std::vector<Eigen::MatrixXd> psi(6, Eigen::MatrixXd::Zero(5, d0));
  for (int i = 0; i < 5; ++i)
    for (int c = 0; c < 2; ++c)
      for (int p = 0; p < 3; ++p) {
        const double a = M_PI * (p + 0.5) / 3;
        const double tau[3] = {1, std::cos(a), std::sin(a)};
        const double v0 = z(i, c * 6 + 2 * p), v1 = z(i, c * 6 + 2 * p + 1);
        const double rms = std::sqrt((v0 * v0 + v1 * v1) / 2);
        for (int k = 0; k < 3; ++k) {
          psi[static_cast<size_t>(c * 3 + p)](i, 3 * k) = tau[k] * v0;
          psi[static_cast<size_t>(c * 3 + p)](i, 3 * k + 1) = tau[k] * v1;
          psi[static_cast<size_t>(c * 3 + p)](i, 3 * k + 2) = tau[k] * rms;
        }
      }
  for (auto& m : psi) m.rowwise() -= m.colwise().mean();
  Mask mask(2, 3);
  mask.set(0, 0, true);
  mask.set(1, 2, true);
  const auto M = f->features({mask}, ViewSide::kMasked);  // shared mask
  const auto U = f->features({mask}, ViewSide::kUnmasked);
  for (int i = 0; i < 5; ++i) {
    Eigen::VectorXd m_ref = Eigen::VectorXd::Zero(2 * d0), u_ref = Eigen::VectorXd::Zero(2 * d0);
    m_ref.head(d0) = psi[0].row(i).transpose() / 2;
    m_ref.tail(d0) = psi[5].row(i).transpose() / 2;
    u_ref.head(d0) = (psi[1].row(i) + psi[2].row(i)).transpose() / 4;
    u_ref.tail(d0) = (psi[3].row(i) + psi[4].row(i)).transpose() / 4;
    CHECK((M.row(i).transpose() - m_ref).cwiseAbs().maxCoeff() < 1e-9);
    CHECK((U.row(i).transpose() - u_ref).cwiseAbs().maxCoeff() < 1e-9);
  }
}

TEST_CASE("rff-mean: linear Gram of the views approximates the mean-embedding view kernel") {
  // With one mask shared by all windows, centring each token's embedding over the windows is
  // feature-space centring of the view embeddings, so M Mᵀ must approach H G H, G the exact
  // mean-embedding view kernel of the Gaussian patch kernel (computed by hand below); the RFF
  // error with D = 4000 is O(1/sqrt(D)).
  const Grid g{2, 3, 2};
  const auto w = small_windows(40, g, 6);
  RffMeanFeatureMap map(4000, 3, 1.5);
  const auto f = map.prepare(w, g);
  CHECK(f->dim() == 4000);
  CHECK(f->column_channels().empty());
  Mask mask(2, 3);
  mask.set(0, 0, true);
  mask.set(1, 1, true);
  const auto M = f->features({mask}, ViewSide::kMasked);
  const auto U = f->features({mask}, ViewSide::kUnmasked);
  CHECK(M.rows() == 40);
  // Centred over windows: every column of the view features has mean 0.
  CHECK(M.colwise().mean().cwiseAbs().maxCoeff() < 1e-12);
  CHECK(U.colwise().mean().cwiseAbs().maxCoeff() < 1e-12);
  const auto z = standardised(w);
  auto patch = [&](int i, int t) {
    const int c = t / 3, p = t % 3;
    return Eigen::Vector2d(z(i, c * 6 + 2 * p), z(i, c * 6 + 2 * p + 1));
  };
  const std::vector<int> toks = {0, 4};  // masked tokens
  Eigen::MatrixXd G(40, 40);
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 40; ++j) {
      double s = 0;
      for (int a : toks)
        for (int b : toks)
          s += std::exp(-(patch(i, a) - patch(j, b)).squaredNorm() / (2 * 1.5 * 1.5));
      G(i, j) = s / 4;
    }
  Eigen::MatrixXd Gc = G;
  Gc.rowwise() -= G.colwise().mean();
  Gc.colwise() -= G.rowwise().mean();
  Gc.array() += G.mean();
  const Eigen::MatrixXd K = M * M.transpose();
  CHECK((K - Gc).cwiseAbs().maxCoeff() < 0.06);
}

TEST_CASE("callback: batches, view tokens, errors") {
  const Grid g{2, 3, 2};
  const auto w = small_windows(5, g, 4);
  std::vector<int> batch_sizes;
  CallbackFeatureMap map(
      "count",
      [&](const data::Windows& ws, const std::vector<int>& rows,
          const std::vector<std::vector<int>>& tokens) {
        CHECK(&ws == &w);
        batch_sizes.push_back(static_cast<int>(rows.size()));
        Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), 2);
        for (size_t k = 0; k < rows.size(); ++k) {
          out(static_cast<Eigen::Index>(k), 0) = rows[k];
          out(static_cast<Eigen::Index>(k), 1) = tokens[k].empty() ? -1 : tokens[k][0];
        }
        return out;
      },
      2);
  const auto f = map.prepare(w, g);
  CHECK_FALSE(f->thread_safe());
  Mask mask(2, 3);
  mask.set(1, 1, true);
  const auto M = f->features({mask}, ViewSide::kMasked);
  CHECK(batch_sizes == std::vector<int>{2, 2, 1});
  CHECK(f->dim() == 2);
  for (int i = 0; i < 5; ++i) {
    CHECK(M(i, 0) == i);
    CHECK(M(i, 1) == 4);  // token 1*3 + 1
  }
  CHECK(f->features({mask}, ViewSide::kUnmasked)(0, 1) == 0);
  CHECK_THROWS_AS(f->features({mask, mask}, ViewSide::kMasked), std::invalid_argument);
  CHECK_THROWS_AS(f->features({Mask(3, 3)}, ViewSide::kMasked), std::invalid_argument);
  CHECK_THROWS_AS(CallbackFeatureMap("x", nullptr), std::invalid_argument);
  CHECK_THROWS_AS(CallbackFeatureMap(
                      "x", [](auto&, auto&, auto&) { return Eigen::MatrixXd(); }, 0),
                  std::invalid_argument);
  CallbackFeatureMap bad("bad", [](const data::Windows&, const std::vector<int>&,
                                   const std::vector<std::vector<int>>&) {
    return Eigen::MatrixXd::Constant(1, 1, std::nan(""));
  });
  CHECK_THROWS_AS(bad.prepare(w, g)->features({mask}, ViewSide::kMasked), std::runtime_error);
}

TEST_CASE("feature maps: bad windows and names") {
  const Grid g{2, 3, 2};
  auto w = small_windows(5, g, 5);
  CHECK_THROWS_AS(make_feature_map("raw")->prepare(w, Grid{2, 4, 2}), std::invalid_argument);
  w.x.leftCols(6).setConstant(1.0f);  // channel 0 constant
  CHECK_THROWS_AS(make_feature_map("raw")->prepare(w, g), std::invalid_argument);
  CHECK_THROWS_AS(make_feature_map("encoder"), std::invalid_argument);
  CHECK(feature_map_names() == std::vector<std::string>{"raw", "patch-mean", "rff-mean"});
  CHECK_THROWS_AS(RffMeanFeatureMap(0), std::invalid_argument);
  CHECK_THROWS_AS(RffMeanFeatureMap(8, 0, -1.0), std::invalid_argument);
}
