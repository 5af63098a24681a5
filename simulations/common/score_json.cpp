#include "score_json.hpp"

#include "moca/masking/policy_spec.hpp"

namespace moca::sim {

namespace {
bool takes_ratio(const std::string& name) {
  return name == "cross" || name == "random" || name == "sync" || name == "temporal" ||
         name == "extrapolation" || name == "per-modality";
}
}  // namespace

std::string with_default_ratio(const std::string& spec_text, double ratio) {
  masking::PolicySpec spec = masking::parse_policy_spec(spec_text);
  std::string target = spec.name;
  if (spec.name == "adaptive") {
    const std::string* b = spec.find("base");
    target = b ? *b : "cross";
  }
  if (takes_ratio(target) && spec.find("ratio") == nullptr) {
    spec.options.emplace_back("ratio", masking::format_number(ratio));
  }
  return masking::format_policy_spec(spec);
}

nlohmann::json score_to_json(const masking::PolicyScore& s) {
  return {{"scheme", s.scheme},
          {"spec", s.spec},
          {"score", s.mean},
          {"std_error", s.std_error},
          {"ci", {s.ci_low, s.ci_high}},
          {"null_level", s.null_level},
          {"draws", s.draws},
          {"values", s.values},
          {"masked_fraction", s.mean_masked_fraction},
          {"warning", s.warning},
          {"seconds", s.seconds}};
}

nlohmann::json all_comparisons(const std::vector<masking::PolicyScore>& scores) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = i + 1; j < scores.size(); ++j) {
      const masking::PairedComparison c = masking::compare_scores(scores[i], scores[j]);
      out.push_back({{"a", scores[i].spec},
                     {"b", scores[j].spec},
                     {"difference", c.difference},
                     {"std_error", c.std_error},
                     {"ci", {c.ci_low, c.ci_high}},
                     {"p_value", c.p_value},
                     {"draws", c.draws}});
    }
  }
  return out;
}

}  // namespace moca::sim
