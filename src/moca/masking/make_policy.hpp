#pragma once
/// \file make_policy.hpp
/// Builds a masking policy from a spec string `name[:key=value[,key=value]*]`, through the
/// policy registry: one row per policy (policy_registry(), the table in make_policy.cpp) gives
/// its name, keys and defaults, whether a tool's --ratio applies, and its factory. Everything
/// that asks about a policy by name (make_policy, policy_names, with_default_ratio, the tools'
/// lists, Python's moca.policy_names) asks the registry.
///
/// spec() of the result is canonical (every key, defaults filled in) and parses back into an
/// equal policy.
#include <memory>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/policy.hpp"
#include "moca/masking/policy_spec.hpp"

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

/// Whether a tool's global --ratio applies to a policy (with_default_ratio).
enum class RatioRule {
  kNone,   ///< the policy takes no ratio (sensor, fixed)
  kOwn,    ///< its own `ratio` key
  kOfBase  ///< through its base policy (adaptive: base=..., cross by default)
};

/// Builds a policy from its parsed spec (keys checked by the factory).
using PolicyFactory = std::unique_ptr<MaskPolicy> (*)(const PolicySpec& spec, const Grid& grid,
                                                      const PolicyContext& context);

/// One row of the policy registry.
struct PolicyEntry {
  const char* name;    ///< the spec's name, e.g. "cross"
  const char* keys;    ///< its keys with defaults, as documented, e.g. "ratio (0.75)"
  RatioRule ratio;     ///< whether --ratio applies
  PolicyFactory make;  ///< the factory
};

/// The registry, in documentation order.
const std::vector<PolicyEntry>& policy_registry();

/// The row named `name`, or nullptr.
const PolicyEntry* find_policy(const std::string& name);

/// The policy names make_policy() knows, in documentation order.
std::vector<std::string> policy_names();

/// Parses `spec` and builds the policy for `grid`. Throws std::invalid_argument for an unknown
/// name, key or value (the message lists the valid ones) and for a ratio/keep that breaks the
/// policy's rule.
std::unique_ptr<MaskPolicy> make_policy(const std::string& spec, const Grid& grid,
                                        const PolicyContext& context = {});

}  // namespace moca::masking
