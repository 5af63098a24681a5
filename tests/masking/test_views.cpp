// Tests for views.hpp: x^U + x^M = x, zero fill, patch sets with positions, shape errors.
#include <doctest/doctest.h>

#include "moca/masking/views.hpp"

using namespace moca;
using namespace moca::masking;

TEST_CASE("views partition the window; patch sets carry positions") {
  const Grid grid{3, 4, 2};
  data::RowMatrixXf x(3, 8);
  for (int c = 0; c < 3; ++c)
    for (int t = 0; t < 8; ++t) x(c, t) = static_cast<float>(10 * c + t + 1);
  Mask m(3, 4);
  m.set(0, 1, true);
  m.set(2, 3, true);
  m.set(1, 0, true);
  const auto u = view_window(x, grid, m, ViewSide::kUnmasked);
  const auto v = view_window(x, grid, m, ViewSide::kMasked);
  CHECK((u + v - x).cwiseAbs().maxCoeff() == 0.0f);
  CHECK(u(0, 2) == 0.0f);
  CHECK(u(0, 3) == 0.0f);
  CHECK(v(0, 2) == x(0, 2));
  CHECK(v(0, 0) == 0.0f);
  CHECK((u.array() * v.array()).abs().maxCoeff() == 0.0f);

  const auto pm = view_patches(x, grid, m, ViewSide::kMasked);
  REQUIRE(pm.size() == 3);
  CHECK(pm.channels == std::vector<int>{0, 1, 2});
  CHECK(pm.patches == std::vector<int>{1, 0, 3});
  CHECK(pm.values(0, 0) == x(0, 2));
  CHECK(pm.values(2, 1) == x(2, 7));
  const auto pu = view_patches(x, grid, m, ViewSide::kUnmasked);
  CHECK(pu.size() == 9);
  CHECK(view_tokens(m, ViewSide::kMasked) == std::vector<int>{1, 4, 11});
  CHECK(std::string(to_string(ViewSide::kUnmasked)) == "unmasked");
}

TEST_CASE("views: shape errors") {
  const Grid grid{3, 4, 2};
  data::RowMatrixXf x = data::RowMatrixXf::Zero(3, 7);
  CHECK_THROWS_AS(view_window(x, grid, Mask(3, 4), ViewSide::kMasked), std::invalid_argument);
  data::RowMatrixXf y = data::RowMatrixXf::Zero(3, 8);
  CHECK_THROWS_AS(view_patches(y, grid, Mask(2, 4), ViewSide::kMasked), std::invalid_argument);
}
