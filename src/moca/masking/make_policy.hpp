#pragma once
/// \file make_policy.hpp
/// Builds a masking policy from a spec string `name[:key=value[,key=value]*]`.
///
// clang-format off
/// | name | keys (default) |
/// | --- | --- |
/// | cross | ratio (0.75) |
/// | random | ratio (0.7) |
/// | sync | ratio (0.75) |
/// | temporal | ratio (0.7) |
/// | extrapolation | ratio (0.7) |
/// | sensor | keep (1) |
/// | per-modality | ratio (0.75), groups (two halves, e.g. 0-2/3-5 for C = 6) |
/// | adaptive | base (cross), beta (20), candidates (256), seed (0), pilot (256), pca (20), features (raw); other keys go to the base policy (adaptive_policy.hpp) |
/// | fixed | file (a Mask::parse file) or cells (rows joined by '/', e.g. 0101/1010); exactly one |
// clang-format on
///
/// spec() of the result is canonical (every key, defaults filled in) and parses back into an
/// equal policy.
#include <memory>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/policy.hpp"

namespace moca::masking {

class FeatureMap;

/// What data-dependent policies (adaptive) need besides the spec: the pilot windows and the
/// feature map Phi that scores candidate masks. Data-independent policies ignore it.
struct PolicyContext {
  /// Pilot windows (not owned; must outlive make_policy(), not the policy). Required by adaptive.
  const data::Windows* pilot = nullptr;
  /// Feature map for adaptive scoring; null means `raw`.
  std::shared_ptr<const FeatureMap> features;
  /// The data's modality groups (channel lists). Empty: the pilot windows' groups
  /// (data::Windows::modalities) when a pilot is given, else unknown. Known groups are the
  /// default groups of per-modality; with only one group, `sensor` and `per-modality` (without
  /// groups=) are refused, since they mask one modality against the others.
  std::vector<std::vector<int>> modalities;
};

/// The policy names make_policy() knows, in documentation order.
std::vector<std::string> policy_names();

/// Parses `spec` and builds the policy for `grid`. Throws std::invalid_argument for an unknown
/// name, key or value (the message lists the valid ones) and for a ratio/keep that breaks the
/// policy's rule.
std::unique_ptr<MaskPolicy> make_policy(const std::string& spec, const Grid& grid,
                                        const PolicyContext& context = {});

}  // namespace moca::masking
