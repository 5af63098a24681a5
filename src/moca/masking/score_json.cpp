#include "moca/masking/score_json.hpp"

namespace moca::masking {

nlohmann::json to_json(const PolicyScore& s) {
  return {{"scheme", s.scheme},
          {"spec", s.spec},
          {"score", s.mean},
          {"std_error", s.std_error},
          {"ci", {s.ci_low, s.ci_high}},
          {"null_level", s.null_level},
          {"draws", s.draws},
          {"values", s.values},
          {"null_values", s.null_values},
          {"masked_fraction", s.mean_masked_fraction},
          {"warning", s.warning},
          {"seconds", s.seconds}};
}

nlohmann::json to_json(const PairedComparison& c) {
  return {{"a", c.a},
          {"b", c.b},
          {"difference", c.difference},
          {"std_error", c.std_error},
          {"ci", {c.ci_low, c.ci_high}},
          {"p_value", c.p_value},
          {"test", "paired t (Student t, R-1 df)"},
          {"draws", c.draws}};
}

nlohmann::json all_comparisons(const std::vector<PolicyScore>& scores) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < scores.size(); ++i)
    for (size_t j = i + 1; j < scores.size(); ++j)
      out.push_back(to_json(compare_scores(scores[i], scores[j])));
  return out;
}

}  // namespace moca::masking
