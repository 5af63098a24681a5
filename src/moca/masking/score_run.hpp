#pragma once
/// \file score_run.hpp
/// One scoring run as `kcca_score` and `moca.score` make it: masking policies from spec strings
/// (and policies made by the caller) scored on the same windows by a PolicyScorer, every pair
/// compared. The result is a struct; to_json() is its one JSON shape (kcca_score --json).
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/mask.hpp"
#include "moca/masking/policy.hpp"
#include "moca/masking/policy_score.hpp"

namespace moca::masking {

/// The feature map of a run (ScoreRunOptions::features): make_feature_map()'s maps, or a trained
/// encoder given as ScoreRunOptions::feature_map.
enum class FeatureKind { kRaw, kPatchMean, kRffMean, kEncoder };
// clang-format off
/// The names of the feature maps (`--features`, the score JSON's settings).
inline constexpr EnumName<FeatureKind> kFeatureKindNames[] = {
    {FeatureKind::kRaw,       "raw"},
    {FeatureKind::kPatchMean, "patch-mean"},
    {FeatureKind::kRffMean,   "rff-mean"},
    {FeatureKind::kEncoder,   "encoder"}};
// clang-format on
std::string to_string(FeatureKind v);

/// The mask mode asked of a run (ScoreRunOptions::mask_mode): a MaskMode, or auto.
enum class MaskModeChoice {
  kAuto,       ///< shared with a feature map (a trained encoder), per-window otherwise
  kPerWindow,  ///< MaskMode::kPerWindow
  kShared,     ///< MaskMode::kShared
};
inline constexpr EnumName<MaskModeChoice> kMaskModeChoiceNames[] = {
    {MaskModeChoice::kAuto, "auto"},
    {MaskModeChoice::kPerWindow, "per-window"},
    {MaskModeChoice::kShared, "shared"}};

/// Options of score_windows() (kcca_score's scoring flags; defaults as docs/masking.md).
/// Messages of validate() name the fields (`ScoreRunOptions::ratio`; the programs print the flags).
struct ScoreRunOptions {
  /// Scheme specs, e.g. {"cross", "sync:ratio=0.5", "adaptive:base=cross,beta=20"}.
  std::vector<std::string> schemes = {"cross", "sync"};
  /// Mask ratio given to every scheme that takes a `ratio` key and does not set one; in (0, 1).
  double ratio = 0.75;
  /// raw (default) | patch-mean | rff-mean | encoder (needs feature_map); ignored when
  /// feature_map is set.
  FeatureKind features = FeatureKind::kRaw;
  /// The scorer's options (estimator, pca, kernel, gamma, sigma, draws, seed, threads;
  /// ScoreOptions::validate() checks them). The run sets `score.mask_mode` from `mask_mode`
  /// and fills the view channels for `cross_modal`.
  ScoreOptions score;
  /// The mask mode: kAuto (default) is shared when `feature_map` is set (a trained encoder: its
  /// outputs carry token positions, so per-window masks let CCA read the mask pattern from both
  /// views, docs/masking.md), per-window otherwise.
  MaskModeChoice mask_mode = MaskModeChoice::kAuto;
  int patch_length = 20;  ///< Lp (>= 1); must divide the windows' length
  /// Score only the cross-modal part: the unmasked view restricted to the first modality group
  /// (acc) against the masked view restricted to the other groups (gyro, ...); needs >= 2 groups.
  bool cross_modal = false;
  /// A feature map that replaces `features` (e.g. a trained encoder from src/moca/model); its name
  /// is reported as the feature map.
  std::shared_ptr<const FeatureMap> feature_map;
  /// Policies scored after `schemes` (library callers, e.g. a Python callable as a
  /// FunctionPolicy); each must be made for the windows' grid.
  std::vector<std::shared_ptr<const MaskPolicy>> policies;
  /// Throws std::invalid_argument naming the option (`ScoreRunOptions::ratio`), its value and
  /// the rule: the rows' ranges, the schemes, then score.validate().
  void validate() const;

  /// The options a user sets (option_schema.hpp), ScoreOptions' among them: kcca_score's flags
  /// and moca.score's keywords. The schemes are not a row: --scheme's specs hold commas of their
  /// own (split_spec_list), and Python passes them, with Policy objects, as a list.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* kOwner = "ScoreRunOptions";
    v(o.ratio, Option{kOwner, "ratio", "--ratio", "mask ratio for schemes that take one",
                      Range::between(0, 1, true, true)});
    v(o.features,
      Option{kOwner, "features", "--features",
             "raw | patch-mean | rff-mean | encoder (a pre-trained MoCA encoder; its default mask "
             "mode is shared)"},
      kFeatureKindNames);
    v(o.mask_mode,
      Option{kOwner, "mask_mode", "--mask-mode",
             "per-window | shared | auto (shared for an encoder, else per-window)"},
      kMaskModeChoiceNames);
    v(o.patch_length,
      Option{kOwner, "patch_length", "--patch-length", "samples per patch", Range::at_least(1)});
    v(o.cross_modal,
      Option{kOwner, "cross_modal", "--cross-modal",
             "score only the unmasked first modality group (acc) vs the masked other groups"});
    ScoreOptions::schema(o.score, v);
  }
};

/// The mask mode a run uses: options.mask_mode, with kAuto resolved (see there).
MaskMode effective_mask_mode(const ScoreRunOptions& options);

/// The caution for options whose scores measure the masks as much as the data: a feature map
/// (an encoder) with per-window masks (docs/masking.md); "" for other options. kcca_score prints
/// it and moca.score raises it as a Python warning, each naming its own option for the fix.
std::string mask_mode_warning(const ScoreRunOptions& options);

/// Sets options.mask_mode from its name ("auto", "per-window", "shared"); throws
/// std::invalid_argument listing those for other text.
void set_mask_mode(ScoreRunOptions& options, const std::string& text);

/// What score_windows() found, with what it ran.
struct ScoreRun {
  ScoreRunOptions options;  ///< as given
  /// Provenance of the windows as the caller gave it, with "channels", "sample_rate_hz",
  /// "description" and (if absent) "source": "windows" added from the windows.
  nlohmann::json data;
  int windows = 0;                     ///< windows scored
  Grid grid;                           ///< the mask grid
  std::string features;                ///< the feature map's name
  ScoreOptions score;                  ///< the scorer's options as run (mask mode, view channels)
  std::string views = "all channels";  ///< which channels each view kept
  std::vector<PolicyScore> scores;     ///< one per policy: `schemes`, then `policies`
  /// compare_scores(scores[a], scores[b]) for every a < b.
  std::vector<PairedComparison> comparisons;
  double seconds = 0.0;  ///< wall time
};

/// The patch lengths a window of `window_length` samples takes, its divisors ascending, as text:
/// "1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 200" for 200.
std::string patch_lengths_text(int window_length);
/// Throws std::invalid_argument naming ScoreRunOptions::patch_length unless `patch_length`
/// divides `window_length` (the window's own length: a folder's, not the default 200), listing
/// the patch lengths that do.
void check_patch_length(int patch_length, int window_length);

/// A progress line of a long run (without a trailing newline).
using ScoreProgress = std::function<void(const std::string& line)>;

/// Scores every policy on `windows` (one PolicyScorer: same windows, common random numbers) and
/// compares every pair. `data` is the windows' provenance (ScoreRun::data). `progress`, when
/// set, receives a line per second of runs longer than a second. Throws std::invalid_argument
/// for bad options or a policy made for another grid, std::runtime_error for numerical failure.
ScoreRun score_windows(const data::Windows& windows, nlohmann::json data,
                       const ScoreRunOptions& options, const ScoreProgress& progress = {});

/// {"data", "settings" (the scoring as it ran: schemes, ratio, features, estimator, pca, kernel,
/// gamma, sigma, draws, mask_mode, patch_length, cross_modal, views, grid, ci, null_level),
/// "seed", "schemes" (score_json.hpp's to_json of each score), "comparisons", "seconds"}.
nlohmann::json to_json(const ScoreRun& run);

}  // namespace moca::masking
