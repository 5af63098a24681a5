#pragma once
/// \file kcca_score.hpp
/// The body of the `kcca_score` tool: score masking schemes by the canonical correlation
/// between the unmasked and masked views (moca::masking::PolicyScorer), print a table and
/// write JSON. main() only parses flags into KccaScoreOptions and calls run_kcca_score().
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moca/data/dataset.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/policy.hpp"
#include "moca/masking/policy_score.hpp"

namespace moca::tools {

/// Options of kcca_score (the flags; defaults as documented in docs/masking.md).
struct KccaScoreOptions {
  /// Data spec (moca::data::open_dataset): hapt:DIR, hmp:DIR, npy:DIR, generator[:...] or a
  /// folder; empty = $MOCA_HAPT_DIR if set, else the built-in generator.
  std::string data;
  /// The --data-* options (format, modalities, rate, ...); the model length/rate fields give the
  /// window length and rate scored (default 200 samples at 50 Hz).
  data::DatasetOptions dataset;
  /// Algorithm-1 synthetic transitions built from the labelled windows' 7:3 training split; 0 =
  /// score the data's own windows; -1 (default) = `samples` transitions for HAPT, 0 otherwise.
  int transitions = -1;
  /// Scheme specs, e.g. {"cross", "sync:ratio=0.5", "adaptive:base=cross,beta=20"}.
  std::vector<std::string> schemes = {"cross", "sync"};
  /// Mask ratio given to every scheme that takes a `ratio` key and does not set one; in (0, 1).
  double ratio = 0.75;
  /// Windows scored: the generator's count, and the cap on a data set's windows (a seeded random
  /// subset when it has more); >= 3.
  int samples = 1000;
  std::string features = "raw";  ///< raw | patch-mean | rff-mean (ignored when feature_map is set)
  /// The scorer's options (--estimator, --pca, --kernel, --gamma, --sigma, --draws, --seed,
  /// --threads; masking::ScoreOptions::validate() checks them). `score.seed` also seeds the data
  /// (generator and transitions). The run sets `score.mask_mode` when `auto_mask_mode` is on and
  /// fills the view channels for `cross_modal`.
  masking::ScoreOptions score;
  /// --mask-mode auto (default): `score.mask_mode` becomes shared when `feature_map` is set (a
  /// trained encoder: its outputs carry token positions, so per-window masks let CCA read the
  /// mask pattern from both views, docs/masking.md), per-window otherwise. false = use
  /// `score.mask_mode` as given.
  bool auto_mask_mode = true;
  std::string json;  ///< JSON output file; empty = none
  /// The program's effective options (tools::config_json: the keys of --print-config), recorded
  /// as the JSON's "options" by run_kcca_score; score_windows reports what ran as "settings".
  nlohmann::json recorded_options;
  double coupling = 0.8;            ///< generator: cross-modal coupling in [0, 1]
  int patch_length = 20;            ///< Lp; must divide the window length (dataset.length)
  std::uint64_t split_seed = 1004;  ///< HAPT: seed of the random 7:3 split (upstream's 1004)
  /// Score only the cross-modal part: the unmasked view restricted to the first modality group
  /// (acc) against the masked view restricted to the other groups (gyro, ...); needs >= 2 groups.
  bool cross_modal = false;
  bool progress = true;  ///< progress lines on stderr for runs over a second
  /// A feature map that replaces `features` (e.g. a trained encoder from src/moca/model); its name
  /// is reported as the feature map.
  std::shared_ptr<const masking::FeatureMap> feature_map;
  /// Policies scored after `schemes` (library callers, e.g. a Python callable as a
  /// masking::FunctionPolicy); each must be made for the windows' grid.
  std::vector<std::shared_ptr<const masking::MaskPolicy>> policies;
  /// Throws std::invalid_argument naming the option, its value and the rule: the tool's own
  /// fields here, then score.validate() and dataset.validate().
  void validate() const;
};

/// The mask mode a run uses: options.score.mask_mode, or the `auto_mask_mode` choice (see there).
masking::MaskMode effective_mask_mode(const KccaScoreOptions& options);

/// Sets the mask mode from its flag text: "auto" (auto_mask_mode) or a masking::MaskMode name
/// ("per-window", "shared"); throws std::invalid_argument listing those for other text.
void set_mask_mode(KccaScoreOptions& options, const std::string& text);

/// Runs the scoring: prints the table to `out`, progress and the data source to `log`, writes
/// the JSON file if asked, and returns the JSON document. Throws std::invalid_argument for bad
/// options (exit 2) and std::runtime_error for I/O or numerical failures (exit 1).
nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log);

/// The scoring part of run_kcca_score() on windows already loaded (options.data, samples,
/// coupling and split_seed are not used; `data_json` is reported as "data"). Prints the table to
/// `out` and progress to `log`; does not write options.json. Returns the JSON document.
nlohmann::json score_windows(const data::Windows& windows, nlohmann::json data_json,
                             const KccaScoreOptions& options, std::ostream& out, std::ostream& log);

}  // namespace moca::tools
