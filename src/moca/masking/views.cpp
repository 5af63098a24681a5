#include "moca/masking/views.hpp"
#include "moca/common/error_text.hpp"

#include <stdexcept>
#include <string>

namespace moca::masking {

namespace {

void check_shapes(const WindowRef& window, const Grid& grid, const Mask& mask, const char* who) {
  grid.validate();
  if (window.rows() != grid.channels || window.cols() != grid.length()) {
    throw_invalid("", std::string(who) + "(): window is " + std::to_string(window.rows()) + " x " +
                          std::to_string(window.cols()) + " but the grid needs " +
                          std::to_string(grid.channels) + " x " + std::to_string(grid.length()));
  }
  if (mask.channels() != grid.channels || mask.patches() != grid.patches) {
    throw_invalid("", std::string(who) + "(): mask is " + std::to_string(mask.channels()) + " x " +
                          std::to_string(mask.patches()) + " but the grid is " +
                          std::to_string(grid.channels) + " x " + std::to_string(grid.patches));
  }
}

bool in_view(const Mask& mask, int token, ViewSide side) {
  return mask.masked(token) == (side == ViewSide::kMasked);
}

}  // namespace

const char* to_string(ViewSide side) {
  return side == ViewSide::kMasked ? "masked" : "unmasked";
}

std::vector<int> view_tokens(const Mask& mask, ViewSide side) {
  return side == ViewSide::kMasked ? mask.masked_tokens() : mask.visible_tokens();
}

data::RowMatrixXf view_window(const WindowRef& window, const Grid& grid, const Mask& mask,
                              ViewSide side) {
  check_shapes(window, grid, mask, "view_window");
  data::RowMatrixXf out = data::RowMatrixXf::Zero(grid.channels, grid.length());
  const int Lp = grid.patch_length;
  for (int c = 0; c < grid.channels; ++c)
    for (int p = 0; p < grid.patches; ++p)
      if (in_view(mask, c * grid.patches + p, side))
        out.row(c).segment(p * Lp, Lp) = window.row(c).segment(p * Lp, Lp);
  return out;
}

PatchSet view_patches(const WindowRef& window, const Grid& grid, const Mask& mask, ViewSide side) {
  check_shapes(window, grid, mask, "view_patches");
  PatchSet set;
  const auto tokens = view_tokens(mask, side);
  const int Lp = grid.patch_length;
  set.values.resize(static_cast<Eigen::Index>(tokens.size()), Lp);
  for (size_t k = 0; k < tokens.size(); ++k) {
    const int c = tokens[k] / grid.patches, p = tokens[k] % grid.patches;
    set.values.row(static_cast<Eigen::Index>(k)) = window.row(c).segment(p * Lp, Lp);
    set.channels.push_back(c);
    set.patches.push_back(p);
  }
  return set;
}

}  // namespace moca::masking
