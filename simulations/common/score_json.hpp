#pragma once
/// \file score_json.hpp
/// Policy-score helpers shared by the studies: default ratios in specs, scores and paired
/// comparisons as JSON (the kcca_score shape: score, std_error, ci, null_level, draws).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"

namespace moca::sim {

/// The studies fill --ratio into specs exactly as kcca_score does (masking/policy_spec.hpp).
using masking::with_default_ratio;

/// {"scheme", "spec", "score", "std_error", "ci": [lo, hi], "null_level", "draws", "values",
///  "masked_fraction", "warning", "seconds"}.
nlohmann::json score_to_json(const masking::PolicyScore& s);

/// Paired comparisons of every pair (i < j) of `scores` (same scorer): {"a", "b", "difference",
/// "std_error", "ci", "p_value", "draws"}.
nlohmann::json all_comparisons(const std::vector<masking::PolicyScore>& scores);

}  // namespace moca::sim
