#pragma once
/// \file views.hpp
/// The two views a mask makes of a window (paper, Theoretical Analysis / Notation):
/// x^U = x (.) (1 - m) (the unmasked, visible view) and x^M = x (.) m (the masked view), each
/// either as a zero-filled C x L window or as the set of its patches with their positions.
#include <vector>

#include "moca/masking/policy.hpp"

namespace moca::masking {

/// Which view of a masked window.
enum class ViewSide {
  kUnmasked,  ///< x^U: the cells with m = 0 (what the encoder sees)
  kMasked,    ///< x^M: the cells with m = 1 (what the decoder reconstructs)
};

/// "unmasked" or "masked".
const char* to_string(ViewSide side);

/// Ascending token indices c*P + p of the view's cells.
std::vector<int> view_tokens(const Mask& mask, ViewSide side);

/// The zero-filled view: x (.) (1 - m) or x (.) m as a C x L matrix (every sample of a cell
/// outside the view set to 0). Throws std::invalid_argument if the window is not C x L or the
/// mask is not C x P of `grid`.
data::RowMatrixXf view_window(const WindowRef& window, const Grid& grid, const Mask& mask,
                              ViewSide side);

/// A view as a set of patches with positions: patch k has values `values.row(k)` (Lp samples),
/// channel `channels[k]` and time patch `patches[k]`, in ascending token order.
struct PatchSet {
  Eigen::MatrixXf values;     ///< |view| x Lp
  std::vector<int> channels;  ///< modality c of each patch
  std::vector<int> patches;   ///< time patch p of each patch
  int size() const { return static_cast<int>(channels.size()); }
};

/// The view's patches with their (modality, time) positions. Same checks as view_window().
PatchSet view_patches(const WindowRef& window, const Grid& grid, const Mask& mask, ViewSide side);

}  // namespace moca::masking
