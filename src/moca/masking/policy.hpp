#pragma once
/// \file policy.hpp
/// The masking-policy interface: a stochastic policy P(. | x) over admissible masks of a grid.
/// The same policy objects feed the scorer (kcca_score) and the trainer (src/moca/model).
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/mask.hpp"

namespace moca::masking {

/// A window as C x L row-major floats (a row of data::Windows::x viewed as a matrix).
using WindowRef = Eigen::Ref<const data::RowMatrixXf>;

/// A stochastic masking policy. Implementations are immutable after construction, so one policy
/// may be sampled from several threads, each with its own Rng.
class MaskPolicy {
 public:
  virtual ~MaskPolicy() = default;
  /// Short scheme name, e.g. "cross".
  virtual std::string name() const = 0;
  /// Canonical spec string that make_policy() parses back into an equal policy,
  /// e.g. "cross:ratio=0.75".
  virtual std::string spec() const = 0;
  /// The grid this policy masks.
  virtual const Grid& grid() const = 0;
  /// Draws one mask. `window` is the C x L window the mask is for; data-independent policies
  /// ignore it (an empty 0 x 0 ref is allowed for them).
  virtual Mask sample(Rng& rng, const WindowRef& window) const = 0;
  /// Whether sample() reads the window's values (a user's function); false for the policies
  /// that draw from the grid alone, which may then be given an empty window (a data-parallel
  /// rank draws the masks of the whole global batch but reads only its own slice).
  virtual bool reads_window() const { return false; }
};

/// The mask of window `index` of a set, as the inspection paths draw it (`moca embed`, `moca
/// attention`, Python's Encoder.embed and attention): the first draw of
/// Rng(derive_seed(seed, index)), so a window's mask does not depend on the other windows.
inline Mask window_mask(const MaskPolicy& policy, std::uint64_t seed, int index,
                        const WindowRef& window) {
  Rng rng(derive_seed(seed, static_cast<std::uint64_t>(index)));
  return policy.sample(rng, window);
}

/// window_mask() of every window of `w`: the one routine that draws a mask per window (the
/// inspection commands, the studies' held-out evaluation, bound_check).
inline std::vector<Mask> window_masks(const MaskPolicy& policy, const data::Windows& w,
                                      std::uint64_t seed) {
  std::vector<Mask> masks;
  masks.reserve(static_cast<size_t>(w.size()));
  for (int i = 0; i < w.size(); ++i) masks.push_back(window_mask(policy, seed, i, w.window(i)));
  return masks;
}

}  // namespace moca::masking
