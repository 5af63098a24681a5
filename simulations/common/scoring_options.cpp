#include "scoring_options.hpp"

namespace moca::sim {

nlohmann::json scoring_settings_json(const std::vector<std::string>& schemes, double ratio,
                                     const std::vector<std::string>& features,
                                     const masking::ScoreOptions& score, int patch_length,
                                     bool cross_modal) {
  return {{"schemes", schemes},
          {"ratio", ratio},
          {"features", features},
          {"estimator", masking::to_string(score.estimator)},
          {"pca", score.pca},
          {"draws", score.draws},
          {"patch_length", patch_length},
          {"cross_modal", cross_modal}};
}

}  // namespace moca::sim
