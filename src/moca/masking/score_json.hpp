#pragma once
/// \file score_json.hpp
/// Policy scores and paired comparisons (policy_score.hpp) as JSON: the one shape that
/// kcca_score, the Python package and every study in simulations/ write.
#include <nlohmann/json.hpp>
#include <vector>

#include "moca/masking/policy_score.hpp"

namespace moca::masking {

/// {"scheme", "spec", "score", "std_error", "ci": [lo, hi], "null_level", "draws", "values",
///  "null_values", "masked_fraction", "warning", "seconds"}.
nlohmann::json to_json(const PolicyScore& s);

/// {"a", "b" (the two canonical specs), "difference", "std_error", "ci": [lo, hi], "p_value",
///  "test", "draws"}.
nlohmann::json to_json(const PairedComparison& c);

/// compare_scores of every pair (i < j) of `scores` (one scorer) as a JSON array.
nlohmann::json all_comparisons(const std::vector<PolicyScore>& scores);

}  // namespace moca::masking
