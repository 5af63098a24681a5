#pragma once
/// \file scoring_options.hpp
/// The part of a scoring study's JSON "settings" object that simulation_study and coupling_sweep
/// share: what was scored (schemes, feature maps, parts) and how (the scorer's settings).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/masking/policy_score.hpp"

namespace moca::sim {

/// {"schemes", "ratio", "features", "estimator", "pca", "draws", "patch_length", "cross_modal"}:
/// the policy specs and the ratio for those without one, the feature maps, the scorer's
/// estimator, PCA components and mask draws, the patch length, and whether the acc->gyro part
/// is scored. Each study adds its own keys (its data, sweeps and checks).
nlohmann::json scoring_settings_json(const std::vector<std::string>& schemes, double ratio,
                                     const std::vector<std::string>& features,
                                     const masking::ScoreOptions& score, int patch_length,
                                     bool cross_modal);

}  // namespace moca::sim
