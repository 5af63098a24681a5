#pragma once
/// \file simulation_study.hpp
/// The paper's simulation study ("Demonstration with Synthetic Data"): n = 1000 synthetic
/// transitions (Algorithm 1) from the HAPT training split, cross vs synchronised masking at
/// ratio 0.75, view features from a feature map (raw, patch-mean, or a pre-trained encoder),
/// PCA to 50 per view and sigma_1(Gamma) — here averaged over R mask draws with a 95% CI and the
/// paired difference, printed beside the paper's 0.925 (cross) / 0.835 (sync).
///
/// Besides the full views ("all"), each built-in feature map is also scored on the cross-modal
/// part alone ("acc->gyro": visible accelerometer cells against masked gyroscope cells), which
/// isolates the term the paper's argument rests on.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/policy_score.hpp"
#include "study_data.hpp"

namespace moca::sim {

/// Options of run_simulation_study (defaults: the paper's setting).
struct SimulationStudyOptions {
  StudyDataOptions data;                                 ///< samples 1000 transitions
  std::vector<std::string> schemes = {"cross", "sync"};  ///< >= 1 policy specs
  double ratio = 0.75;                                   ///< ratio for specs without one; in (0, 1)
  /// Feature maps: raw, patch-mean, encoder (encoder needs `encoder` set).
  std::vector<std::string> features = {"raw", "patch-mean"};
  std::shared_ptr<const masking::FeatureMap> encoder;  ///< the "encoder" map (from src/moca/model)
  std::string encoder_source;                          ///< e.g. the checkpoint path, for the JSON
  /// The scorer: estimator (cca, the paper's, or kcca), pca (paper 50), draws R (20), seed of
  /// the masks (data seed: data.seed), threads across draws; checked by its own validate().
  /// mask_mode and the view channels are set per part (per-window, or shared for
  /// "all/shared-mask"; acc->gyro channels for "acc->gyro").
  masking::ScoreOptions score;
  int patch_length = 20;    ///< Lp, divides the window length
  bool cross_modal = true;  ///< also score acc->gyro for raw / patch-mean
  /// For encoder features, also score (a) "all/shared-mask": one mask per draw shared by all
  /// windows, so the mask pattern is constant over windows and drops out of the centred
  /// covariances, and (b) "mask-only": every window replaced by the mean window, so sigma_1 can
  /// only come from the mask pattern (an encoder's output carries its tokens' positions; with
  /// complementary views the visible positions determine the masked ones). raw and patch-mean
  /// centre per token and need neither.
  bool leak_checks = true;
  /// sigma_1 vs mask ratio: the schemes are also scored (full views, built-in feature maps of
  /// `features`) at each of these ratios, each in (0, 1); empty = skip.
  std::vector<double> ratio_sweep;
  std::string json;  ///< output file; empty = none
  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp): simulation_study's flags besides the data
  /// group (add_study_data_flags), in their order. --checkpoint is the encoder's source; the
  /// program makes the encoder from it. The scorer's rows (owner ScoreOptions: the library's
  /// messages name them so) carry this study's help and no range: score.validate() checks them
  /// by ScoreOptions::schema. The lists keep each given text whole (list_flags.hpp);
  /// --no-leak-checks and --no-cross-modal are the program's own switches.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* M = "SimulationStudyOptions";
    constexpr const char* S = "ScoreOptions";
    const Range any = Range::any();
    v(o.schemes, Option{M, "schemes", "--scheme", "comma-separated policy specs", any, kEveryScope,
                        nullptr, Surface::kBoth, false});
    v(o.ratio, Option{M, "ratio", "--ratio", "mask ratio for specs without one",
                      Range::between(0, 1, true, true)});
    v(o.features, Option{M, "features", "--features", "comma-separated: raw, patch-mean, encoder",
                         any, kEveryScope, nullptr, Surface::kBoth, false});
    v(o.encoder_source, Option{M, "encoder_source", "--checkpoint",
                               "pre-trained MoCA checkpoint (for encoder features)"});
    v(o.score.estimator, Option{S, "estimator", "--estimator", "cca | kcca"},
      masking::kEstimatorNames);
    v(o.score.pca, Option{S, "pca", "--pca", "principal components per view"});
    v(o.score.draws, Option{S, "draws", "--draws", "mask draws"});
    v(o.patch_length,
      Option{M, "patch_length", "--patch-length", "samples per patch", Range::at_least(1)});
    v(o.ratio_sweep,
      Option{M, "ratio_sweep", "--ratio-sweep", "also score the schemes at these ratios", any,
             kEveryScope, "each in (0, 1)", Surface::kBoth, false});
    v(o.score.seed, Option{S, "seed", "--seed", "seed of the mask draws"});
    v(o.score.threads, Option{S, "threads", "--threads", "OpenMP threads (0 = default)"});
    v(o.json, Option{M, "json", "--json", "write results as JSON to this file"});
  }
};

/// The paper's reported values (encoder features, PCA 50, n = 1000).
inline constexpr double kPaperSigmaCross = 0.925;
inline constexpr double kPaperSigmaSync = 0.835;

/// Runs the study, prints a table to `out` and progress to `log`, writes the JSON file when
/// asked and returns the JSON document. std::invalid_argument for bad options,
/// std::runtime_error for I/O and numerical failures.
nlohmann::json run_simulation_study(const SimulationStudyOptions& options, std::ostream& out,
                                    std::ostream& log);

}  // namespace moca::sim
