#include "moca/masking/score_run.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"

namespace moca::masking {

namespace {

std::string channel_list(const std::vector<int>& ch) {
  std::string t;
  for (int c : ch) t += (t.empty() ? "" : ",") + std::to_string(c);
  return t;
}

/// The feature map and the policies (in scoring order) of a run.
struct Setup {
  std::shared_ptr<const FeatureMap> features;
  std::vector<std::shared_ptr<const MaskPolicy>> policies;
};

/// The grid, feature map, scorer options, views and policies of a run (the first four into
/// `run`).
Setup make_setup(const data::Windows& windows, const ScoreRunOptions& options, ScoreRun& run) {
  check_patch_length(options.patch_length, windows.length);
  run.grid = make_grid(windows.channels, windows.length, options.patch_length);
  Setup s;
  s.features =
      options.feature_map ? options.feature_map : make_feature_map(to_string(options.features));
  run.features = s.features->name();
  run.score = options.score;
  run.score.mask_mode = effective_mask_mode(options);
  if (options.cross_modal) {
    use_cross_modal_views(run.score, windows, "ScoreRunOptions::cross_modal");
    if (options.features == FeatureKind::kRffMean && !options.feature_map)
      throw_invalid("",
                    "ScoreRunOptions::cross_modal needs per-channel features (raw, patch-mean), "
                    "not rff-mean");
    run.views = "unmasked channels " + channel_list(run.score.unmasked_channels) +
                " vs masked channels " + channel_list(run.score.masked_channels) +
                " (cross-modal part)";
  }
  PolicyContext ctx;
  ctx.pilot = &windows;
  ctx.features = s.features;
  for (const auto& spec : options.schemes) {
    s.policies.push_back(make_policy(with_default_ratio(spec, options.ratio), run.grid, ctx));
  }
  s.policies.insert(s.policies.end(), options.policies.begin(), options.policies.end());
  return s;
}

}  // namespace

std::string to_string(FeatureKind v) {
  return enum_name(kFeatureKindNames, v);
}

void ScoreRunOptions::validate() const {
  if (schemes.empty() && policies.empty())
    throw_invalid("ScoreRunOptions::schemes", "no scheme given (valid: cross, random, sync, ...)");
  check_ranges(*this);  // the rows' ranges, ScoreOptions' among them
  // an unknown policy name is refused before any data is read (its keys are make_policy's)
  for (const std::string& scheme : schemes) {
    const std::string name = parse_policy_spec(scheme).name;
    if (find_policy(name) == nullptr) {
      const std::vector<std::string> known = policy_names();
      std::string names;
      for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
      throw_invalid(
          "", "ScoreRunOptions::schemes", name,
          "must be one of: " + names + " (did you mean " + nearest_name(name, known) + "?)");
    }
  }
  if (!feature_map && features == FeatureKind::kEncoder)
    throw_invalid("", "ScoreRunOptions::features", to_string(features),
                  "needs feature_map (a trained encoder)");
  score.validate();
}

MaskMode effective_mask_mode(const ScoreRunOptions& options) {
  switch (options.mask_mode) {
    case MaskModeChoice::kPerWindow:
      return MaskMode::kPerWindow;
    case MaskModeChoice::kShared:
      return MaskMode::kShared;
    case MaskModeChoice::kAuto:
      break;
  }
  return options.feature_map ? MaskMode::kShared : MaskMode::kPerWindow;
}

std::string mask_mode_warning(const ScoreRunOptions& options) {
  const bool encoder = options.feature_map || options.features == FeatureKind::kEncoder;
  // (kAuto is shared for an encoder, whether or not the map is loaded yet)
  if (!encoder || options.mask_mode != MaskModeChoice::kPerWindow) return "";
  return "encoder features with per-window masks measure the mask pattern as much as the data "
         "(see docs/masking.md)";
}

void set_mask_mode(ScoreRunOptions& options, const std::string& text) {
  options.mask_mode = parse_enum(kMaskModeChoiceNames, text, "mask mode");
}

std::string patch_lengths_text(int window_length) {
  std::string text;
  for (int d = 1; d <= window_length; ++d)
    if (window_length % d == 0) text += (text.empty() ? "" : ", ") + std::to_string(d);
  return text;
}

void check_patch_length(int patch_length, int window_length) {
  if (patch_length >= 1 && window_length % patch_length == 0) return;
  throw_invalid("", "ScoreRunOptions::patch_length", std::to_string(patch_length),
                "must divide the window length " + std::to_string(window_length) + " (" +
                    patch_lengths_text(window_length) + ")");
}

ScoreRun score_windows(const data::Windows& windows, nlohmann::json data,
                       const ScoreRunOptions& options, const ScoreProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  options.validate();
  ScoreRun run;
  run.options = options;
  run.windows = windows.size();
  data["channels"] = windows.channel_names;
  data["sample_rate_hz"] = windows.sample_rate_hz;
  data["description"] = windows.description;
  if (!data.contains("source")) data["source"] = "windows";
  run.data = std::move(data);

  const Setup setup = make_setup(windows, options, run);
  const auto& policies = setup.policies;
  PolicyScorer scorer(windows, run.grid, setup.features, run.score);
  for (size_t k = 0; k < policies.size(); ++k) {
    const std::string of = " (" + std::to_string(k + 1) + "/" + std::to_string(policies.size());
    double last_line = 0.0;
    auto on_draw = [&](int done, int total) {
      const double t = elapsed();
      if (progress && t > 1.0 && t - last_line >= 1.0 && done < total) {
        progress(policies[k]->name() + of + "): draw " + std::to_string(done) + "/" +
                 std::to_string(total) + ", " + format_fixed(t, 1) + " s elapsed");
        last_line = t;
      }
    };
    run.scores.push_back(scorer.score(*policies[k], on_draw));
    if (progress && elapsed() > 1.0) {
      progress("scored " + policies[k]->spec() + of + ") in " +
               format_fixed(run.scores.back().seconds, 1) + " s, " + format_fixed(elapsed(), 1) +
               " s elapsed");
    }
  }
  for (size_t a = 0; a < run.scores.size(); ++a)
    for (size_t b = a + 1; b < run.scores.size(); ++b)
      run.comparisons.push_back(compare_scores(run.scores[a], run.scores[b]));
  run.seconds = elapsed();
  return run;
}

nlohmann::json to_json(const ScoreRun& run) {
  using nlohmann::json;
  const Grid& grid = run.grid;
  const ScoreOptions& so = run.score;
  json doc;
  doc["data"] = run.data;
  doc["settings"] = {{"schemes", run.options.schemes},
                     {"ratio", run.options.ratio},
                     {"features", run.features},
                     {"estimator", to_string(so.estimator)},
                     {"pca", so.pca},
                     {"ridge", so.ridge},
                     {"kernel", kcca::kernel_type_name(so.kernel)},
                     {"gamma", so.gamma},
                     {"sigma", so.sigma},
                     {"draws", so.draws},
                     {"mask_mode", to_string(so.mask_mode)},
                     {"patch_length", run.options.patch_length},
                     {"cross_modal", run.options.cross_modal},
                     {"views", run.views},
                     {"grid",
                      {{"channels", grid.channels},
                       {"patches", grid.patches},
                       {"patch_length", grid.patch_length}}},
                     {"ci", "95% Student t, R-1 df"},
                     {"null_level", so.estimator == Estimator::kCca
                                        ? "Wachter edge for (pca, pca, n)"
                                        : "KCCA rho_1 with the masked view's rows permuted"}};
  doc["seed"] = so.seed;
  doc["schemes"] = json::array();
  for (const auto& s : run.scores) doc["schemes"].push_back(to_json(s));
  doc["comparisons"] = json::array();
  for (const auto& c : run.comparisons) doc["comparisons"].push_back(to_json(c));
  doc["seconds"] = run.seconds;
  return doc;
}

}  // namespace moca::masking
