#include <doctest/doctest.h>

#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/model/nn/mask_indices.hpp"

using moca::masking::Mask;
using namespace moca::model;

TEST_CASE("indices of a hand-worked mask") {
  // 2 x 3 grid, tokens 0..5, masked {1, 3, 4}: visible {0, 2, 5}.
  const Mask m(2, 3, {0, 1, 0, 1, 1, 0});
  const auto mi = mask_indices({m}, TokenLayout::kModality, 2, 3);
  CHECK(mi.keep == 3);
  CHECK(mi.ids_keep == std::vector<int64_t>{0, 2, 5});
  // shuffle = [0, 2, 5, 1, 3, 4]; restore = its inverse.
  CHECK(mi.ids_restore == std::vector<int64_t>{0, 3, 1, 4, 5, 2});
  CHECK(mi.mask == std::vector<float>{0, 1, 0, 1, 1, 0});
}

TEST_CASE("ids_restore inverts [visible, masked] for random masks") {
  moca::Rng rng(4);
  std::vector<Mask> masks;
  for (int b = 0; b < 7; ++b) {
    std::vector<int> perm(24);
    for (int t = 0; t < 24; ++t) perm[static_cast<size_t>(t)] = t;
    moca::shuffle(perm, rng);
    Mask m(4, 6);
    for (int k = 0; k < 18; ++k) m.set(perm[static_cast<size_t>(k)], true);
    masks.push_back(m);
  }
  const auto mi = mask_indices(masks, TokenLayout::kModality, 4, 6);
  REQUIRE(mi.keep == 6);
  for (int b = 0; b < 7; ++b) {
    std::vector<int64_t> shuffle;
    for (int t : masks[static_cast<size_t>(b)].visible_tokens()) shuffle.push_back(t);
    for (int t : masks[static_cast<size_t>(b)].masked_tokens()) shuffle.push_back(t);
    for (int t = 0; t < 24; ++t) {
      const auto slot = mi.ids_restore[static_cast<size_t>(b * 24 + t)];
      CHECK(shuffle[static_cast<size_t>(slot)] == t);
    }
  }
}

TEST_CASE("stacked layout uses whole columns") {
  const Mask m = Mask::parse("0110\n0110\n0110");
  const auto mi = mask_indices({m}, TokenLayout::kStacked, 3, 4);
  CHECK(mi.tokens == 4);
  CHECK(mi.ids_keep == std::vector<int64_t>{0, 3});
  CHECK_THROWS_WITH_AS(mask_indices({Mask::parse("0110\n0100\n0110")}, TokenLayout::kStacked, 3, 4),
                       doctest::Contains("column 2"), std::invalid_argument);
}

TEST_CASE("bad batches are rejected") {
  CHECK_THROWS_AS(mask_indices({}, TokenLayout::kModality, 2, 2), std::invalid_argument);
  CHECK_THROWS_WITH_AS(mask_indices({Mask(2, 3)}, TokenLayout::kModality, 2, 2),
                       doctest::Contains("grid"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      mask_indices({Mask::parse("10\n00"), Mask::parse("11\n00")}, TokenLayout::kModality, 2, 2),
      doctest::Contains("same visible count"), std::invalid_argument);
}
