#include <doctest/doctest.h>

#include <stdexcept>

#include <cmath>
#include <set>

#include "moca/model/nn/pos_embed.hpp"

using namespace moca::model;

namespace {
// Independent formula: component k < d/2 of the 1-D code is sin(pos / 10000^(k/(d/2))).
double code(int d, double pos, int k) {
  const int half = d / 2;
  const double w = std::exp(-std::log(10000.0) * (k % half) / half);
  return k < half ? std::sin(pos * w) : std::cos(pos * w);
}
}  // namespace

TEST_CASE("sincos_1d matches the transformer formula") {
  const auto v = sincos_1d(4, 1.0);  // w = (1, 1/100)
  CHECK(std::abs(v[0] - std::sin(1.0)) < 1e-15);
  CHECK(std::abs(v[1] - std::sin(0.01)) < 1e-15);
  CHECK(std::abs(v[2] - std::cos(1.0)) < 1e-15);
  CHECK(std::abs(v[3] - std::cos(0.01)) < 1e-15);
  CHECK_THROWS_AS(sincos_1d(3, 0.0), std::invalid_argument);
}

TEST_CASE("2-D table: time code in the first half, modality code in the second") {
  const int C = 6, P = 10, D = 32;
  const auto t = sincos_pos_table(PosEmbedKind::kSinCos2d, TokenLayout::kModality, C, P, D);
  REQUIRE(t.size() == static_cast<size_t>((C * P + 1) * D));
  for (int k = 0; k < D; ++k) CHECK(t[static_cast<size_t>(k)] == 0.0f);  // cls row
  std::set<std::vector<float>> rows;
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < P; ++p) {
      const float* row = t.data() + static_cast<size_t>(1 + c * P + p) * D;
      for (int k = 0; k < D / 2; ++k) {
        CHECK(std::abs(row[k] - code(D / 2, p, k)) < 1e-6);
        CHECK(std::abs(row[D / 2 + k] - code(D / 2, c, k)) < 1e-6);
      }
      rows.insert(std::vector<float>(row, row + D));
    }
  CHECK(rows.size() == static_cast<size_t>(C * P));  // every (modality, time) cell distinct
}

TEST_CASE("1-D table is the released code's 1 x T grid") {
  const int C = 6, P = 10, D = 16;
  const auto t = sincos_pos_table(PosEmbedKind::kSinCos1d, TokenLayout::kModality, C, P, D);
  for (int tok = 0; tok < C * P; ++tok) {
    const float* row = t.data() + static_cast<size_t>(1 + tok) * D;
    for (int k = 0; k < D / 2; ++k) CHECK(std::abs(row[k] - code(D / 2, tok, k)) < 1e-6);
    for (int k = 0; k < D / 4; ++k) {
      CHECK(row[D / 2 + k] == 0.0f);          // sin(0)
      CHECK(row[D / 2 + D / 4 + k] == 1.0f);  // cos(0)
    }
  }
  // Stacked layout: P tokens; both kinds give the time code and a constant half.
  const auto s = sincos_pos_table(PosEmbedKind::kSinCos2d, TokenLayout::kStacked, C, P, D);
  CHECK(s.size() == static_cast<size_t>((P + 1) * D));
  CHECK_THROWS_AS(sincos_pos_table(PosEmbedKind::kSinCos2d, TokenLayout::kModality, C, P, 18),
                  std::invalid_argument);
}

TEST_CASE(
    "1-D table at a pitch: token (c, p) at c * pitch + p, so a shorter model keeps its rows") {
  const int C = 3, P = 10, Pshort = 7, D = 16;
  const auto own = sincos_pos_table(PosEmbedKind::kSinCos1d, TokenLayout::kModality, C, P, D);
  const auto at = sincos_pos_table(PosEmbedKind::kSinCos1d, TokenLayout::kModality, C, Pshort, D,
                                   /*pitch=*/P);
  REQUIRE(at.size() == static_cast<size_t>((C * Pshort + 1) * D));
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < Pshort; ++p) {
      const float* row = at.data() + static_cast<size_t>(1 + c * Pshort + p) * D;
      const float* was = own.data() + static_cast<size_t>(1 + c * P + p) * D;
      for (int k = 0; k < D / 2; ++k) CHECK(std::abs(row[k] - code(D / 2, c * P + p, k)) < 1e-6);
      for (int k = 0; k < D; ++k) CHECK(row[k] == was[k]);  // the very rows of the model's table
    }
  // Pitch 0 and pitch P are the plain code; a pitch below the patches is refused.
  CHECK(sincos_pos_table(PosEmbedKind::kSinCos1d, TokenLayout::kModality, C, P, D, P) == own);
  CHECK_THROWS_WITH_AS(
      sincos_pos_table(PosEmbedKind::kSinCos1d, TokenLayout::kModality, C, P, D, P - 1),
      doctest::Contains("pitch (9)"), std::invalid_argument);
}
