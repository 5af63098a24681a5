#include "kcca_score.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "score_json.hpp"

namespace moca::tools {

namespace {

std::string fmt(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

}  // namespace

void KccaScoreOptions::validate() const {
  if (schemes.empty() && policies.empty())
    throw_invalid("--scheme", "no scheme given (valid: cross, random, sync, ...)");
  if (!(ratio > 0.0 && ratio < 1.0)) throw_invalid("", "--ratio", fmt(ratio), "must be in (0, 1)");
  if (samples < 3) throw_invalid("", "--samples", std::to_string(samples), "must be >= 3");
  if (!feature_map && features != "raw" && features != "patch-mean" && features != "rff-mean")
    throw_invalid("", "--features", features, "must be one of: raw, patch-mean, rff-mean");
  if (!(coupling >= 0.0 && coupling <= 1.0))
    throw_invalid("", "--coupling", fmt(coupling), "must be in [0, 1]");
  if (patch_length < 1 || dataset.length % patch_length != 0)
    throw_invalid("", "--patch-length", std::to_string(patch_length),
                  "must divide the window length " + std::to_string(dataset.length) +
                      " (e.g. 10, 20, 25, 40, 50 for 200)");
  if (transitions < -1)
    throw_invalid("", "--transitions", std::to_string(transitions),
                  "must be >= 0 (0 = the windows)");
  score.validate();
  dataset.validate();
}

masking::MaskMode effective_mask_mode(const KccaScoreOptions& options) {
  if (!options.auto_mask_mode) return options.score.mask_mode;
  return options.feature_map ? masking::MaskMode::kShared : masking::MaskMode::kPerWindow;
}

void set_mask_mode(KccaScoreOptions& options, const std::string& text) {
  if (text == "auto") {
    options.auto_mask_mode = true;
    return;
  }
  options.score.mask_mode = masking::parse_mask_mode(text);
  options.auto_mask_mode = false;
}

namespace {

using nlohmann::json;

/// The windows a run scores and the "data" JSON describing them.
struct LoadedWindows {
  data::Windows windows;
  json data_json;
};

/// Algorithm-1 transitions built from the random 7:3 training split of `ds`.
LoadedWindows transitions_of(const data::Dataset& ds, int transitions, std::uint64_t data_seed,
                             const KccaScoreOptions& options, std::ostream& log) {
  LoadedWindows out{{}, ds.to_json()};
  const data::Windows& all = ds.windows;
  const data::Split split = data::random_split(all.size(), 0.7, options.split_seed);
  const data::Windows train = all.subset(split.train);
  out.windows = data::synthetic_transitions(train, transitions, data_seed);
  log << "kcca_score: scoring " << out.windows.size()
      << " synthetic transitions (Algorithm 1) from the training split of " << train.size()
      << " windows (random 7:3, seed " << options.split_seed << ")\n";
  out.data_json["scored"] = "Algorithm-1 transitions";
  out.data_json["train_windows"] = train.size();
  out.data_json["split"] = "random 7:3";
  out.data_json["split_seed"] = options.split_seed;
  out.data_json["transitions"] = out.windows.size();
  out.data_json["transition_seed"] = data_seed;
  return out;
}

/// The data set's own windows, a seeded random subset of `samples` when it has more.
LoadedWindows own_windows_of(const data::Dataset& ds, std::uint64_t data_seed, int samples,
                             std::ostream& log) {
  LoadedWindows out{ds.windows, ds.to_json()};
  std::string how = "all";
  if (out.windows.size() > samples) {
    std::vector<int> rows = data::numpy_legacy_permutation(
        out.windows.size(), static_cast<std::uint32_t>(data_seed & 0xffffffffULL));
    rows.resize(static_cast<size_t>(samples));
    std::sort(rows.begin(), rows.end());
    out.windows = out.windows.subset(rows);
    how = "a seeded random subset (--samples)";
  }
  log << "kcca_score: scoring " << out.windows.size() << " of the data's " << ds.windows.size()
      << " windows (" << how << ")\n";
  out.data_json["scored"] = "windows";
  out.data_json["scored_windows"] = out.windows.size();
  return out;
}

/// Opens options.data and picks the windows scored (transitions or the data's windows).
LoadedWindows load_windows(const KccaScoreOptions& options, std::ostream& log) {
  const std::uint64_t data_seed = derive_seed(options.score.seed, 0x64617461ULL);
  data::DatasetOptions dopt = options.dataset;
  dopt.generator.windows = options.samples;
  dopt.generator.coupling = options.coupling;
  dopt.generator.seed = data_seed;
  const data::Dataset ds = data::open_dataset(options.data, dopt);
  log << "kcca_score: data: " << ds.summary() << "\n";
  for (const auto& note : ds.notes) log << "kcca_score: data: " << note << "\n";
  const int transitions = options.transitions >= 0                    ? options.transitions
                          : ds.spec.format == data::DataFormat::kHapt ? options.samples
                                                                      : 0;
  if (transitions > 0) return transitions_of(ds, transitions, data_seed, options, log);
  return own_windows_of(ds, data_seed, options.samples, log);
}

}  // namespace

nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();
  LoadedWindows loaded = load_windows(options, log);
  json doc = score_windows(loaded.windows, std::move(loaded.data_json), options, out, log);
  doc["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options.recorded_options.empty()) doc["options"] = options.recorded_options;
  if (!options.json.empty()) write_output_text(options.json, doc.dump(2) + "\n");
  return doc;
}

namespace {

/// What a run scores with: the grid, feature map, scorer options, views and policies.
struct ScoreSetup {
  masking::Grid grid;
  std::shared_ptr<const masking::FeatureMap> features;
  masking::ScoreOptions so;
  std::string views = "all channels";
  std::vector<std::shared_ptr<const masking::MaskPolicy>> policies;
};

std::string channel_list(const std::vector<int>& ch) {
  std::string t;
  for (int c : ch) t += (t.empty() ? "" : ",") + std::to_string(c);
  return t;
}

ScoreSetup make_setup(const data::Windows& windows, const KccaScoreOptions& options) {
  ScoreSetup s;
  s.grid = masking::make_grid(windows.channels, windows.length, options.patch_length);
  s.features =
      options.feature_map ? options.feature_map : masking::make_feature_map(options.features);
  s.so = options.score;
  s.so.mask_mode = effective_mask_mode(options);
  if (options.cross_modal) {
    masking::use_cross_modal_views(s.so, windows, "--cross-modal");
    if (options.features == "rff-mean" && !options.feature_map)
      throw std::invalid_argument(
          "--cross-modal needs per-channel features (raw, patch-mean), "
          "not rff-mean");
    s.views = "unmasked channels " + channel_list(s.so.unmasked_channels) + " vs masked channels " +
              channel_list(s.so.masked_channels) + " (cross-modal part)";
  }
  masking::PolicyContext ctx;
  ctx.pilot = &windows;
  ctx.features = s.features;
  for (const auto& spec : options.schemes) {
    s.policies.push_back(
        masking::make_policy(masking::with_default_ratio(spec, options.ratio), s.grid, ctx));
  }
  s.policies.insert(s.policies.end(), options.policies.begin(), options.policies.end());
  return s;
}

/// Scores every policy in turn, with progress lines on `log` for runs over a second.
std::vector<masking::PolicyScore> score_policies(const data::Windows& windows,
                                                 const ScoreSetup& setup,
                                                 const KccaScoreOptions& options, std::ostream& log,
                                                 const std::function<double()>& elapsed) {
  masking::PolicyScorer scorer(windows, setup.grid, setup.features, setup.so);
  const auto& policies = setup.policies;
  std::vector<masking::PolicyScore> scores;
  for (size_t k = 0; k < policies.size(); ++k) {
    double last_line = 0.0;
    auto on_draw = [&](int done, int total) {
      const double t = elapsed();
      if (options.progress && t > 1.0 && t - last_line >= 1.0 && done < total) {
        log << "kcca_score: " << policies[k]->name() << " (" << k + 1 << "/" << policies.size()
            << "): draw " << done << "/" << total << ", " << fmt(t, 1) << " s elapsed\n";
        last_line = t;
      }
    };
    scores.push_back(scorer.score(*policies[k], on_draw));
    if (options.progress && elapsed() > 1.0) {
      log << "kcca_score: scored " << policies[k]->spec() << " (" << k + 1 << "/" << policies.size()
          << ") in " << fmt(scores.back().seconds, 1) << " s, " << fmt(elapsed(), 1)
          << " s elapsed\n";
    }
  }
  return scores;
}

/// The table's header line and one row per scheme, then the schemes' warnings.
void print_scores(std::ostream& out, const data::Windows& windows, const std::string& source,
                  const ScoreSetup& setup, const std::vector<masking::PolicyScore>& scores) {
  const masking::Grid& grid = setup.grid;
  const masking::ScoreOptions& so = setup.so;
  out << "kcca_score: " << windows.size() << " windows (" << source << "), grid " << grid.channels
      << " x " << grid.patches << " patches of " << grid.patch_length << ", features "
      << setup.features->name() << ", estimator " << masking::to_string(so.estimator)
      << (so.estimator == masking::Estimator::kCca
              ? " (PCA " + std::to_string(so.pca) + ")"
              : " (" + kcca::kernel_type_name(so.kernel) + ", gamma " +
                    masking::format_number(so.gamma) + ")")
      << ", views " << setup.views << ", " << masking::to_string(so.mask_mode) << " masks, "
      << so.draws << " draws, seed " << so.seed << "\n\n";
  size_t w_scheme = 14, w_spec = 34;
  for (const auto& s : scores) {
    w_scheme = std::max(w_scheme, s.scheme.size() + 1);
    w_spec = std::max(w_spec, s.spec.size() + 2);
  }
  out << pad("scheme", w_scheme) << pad("spec", w_spec) << pad("score", 8) << pad("SE", 8)
      << pad("95% CI (t)", 18) << pad("null", 8) << "masked\n";
  for (const auto& s : scores) {
    out << pad(s.scheme, w_scheme) << pad(s.spec, w_spec) << pad(fmt(s.mean), 8)
        << pad(fmt(s.std_error), 8) << pad("[" + fmt(s.ci_low) + ", " + fmt(s.ci_high) + "]", 18)
        << pad(fmt(s.null_level), 8) << fmt(s.mean_masked_fraction, 3) << "\n";
  }
  for (const auto& s : scores)
    if (!s.warning.empty()) out << "warning (" << s.scheme << "): " << s.warning << "\n";
}

/// The paired-differences table (nothing for fewer than two schemes).
void print_comparisons(std::ostream& out, const std::vector<masking::PairedComparison>& comparisons,
                       int draws) {
  if (comparisons.empty()) return;
  out << "\npaired differences (same windows, common random numbers; paired t-test, " << draws - 1
      << " df)\n";
  size_t w_pair = 28;
  for (const auto& c : comparisons) w_pair = std::max(w_pair, c.a.size() + c.b.size() + 5);
  out << pad("a - b", w_pair) << pad("difference", 12) << pad("95% CI", 20) << "p\n";
  for (const auto& c : comparisons) {
    char p[32];
    std::snprintf(p, sizeof(p), "%.3g", c.p_value);
    out << pad(c.a + " - " + c.b, w_pair) << pad(fmt(c.difference), 12)
        << pad("[" + fmt(c.ci_low) + ", " + fmt(c.ci_high) + "]", 20) << p << "\n";
  }
}

/// The JSON document's "settings" object: the scoring as it ran (features, estimator, grid, ...).
json settings_json(const ScoreSetup& setup, const KccaScoreOptions& options) {
  const masking::Grid& grid = setup.grid;
  const masking::ScoreOptions& so = setup.so;
  return {{"schemes", options.schemes},
          {"ratio", options.ratio},
          {"samples", options.samples},
          {"features", setup.features->name()},
          {"estimator", masking::to_string(so.estimator)},
          {"pca", so.pca},
          {"kernel", kcca::kernel_type_name(so.kernel)},
          {"gamma", so.gamma},
          {"sigma", so.sigma},
          {"draws", so.draws},
          {"mask_mode", masking::to_string(so.mask_mode)},
          {"coupling", options.coupling},
          {"patch_length", options.patch_length},
          {"cross_modal", options.cross_modal},
          {"views", setup.views},
          {"grid",
           {{"channels", grid.channels},
            {"patches", grid.patches},
            {"patch_length", grid.patch_length}}},
          {"ci", "95% Student t, R-1 df"},
          {"null_level", so.estimator == masking::Estimator::kCca
                             ? "Wachter edge for (pca, pca, n)"
                             : "KCCA rho_1 with the masked view's rows permuted"}};
}

}  // namespace

nlohmann::json score_windows(const data::Windows& windows, nlohmann::json data_json,
                             const KccaScoreOptions& options, std::ostream& out,
                             std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::function<double()> elapsed = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  options.validate();
  data_json["channels"] = windows.channel_names;
  data_json["sample_rate_hz"] = windows.sample_rate_hz;
  data_json["description"] = windows.description;
  if (!data_json.contains("source")) data_json["source"] = "windows";

  const ScoreSetup setup = make_setup(windows, options);
  const std::vector<masking::PolicyScore> scores =
      score_policies(windows, setup, options, log, elapsed);
  print_scores(out, windows, data_json["source"].get<std::string>(), setup, scores);
  std::vector<masking::PairedComparison> comparisons;
  for (size_t a = 0; a < scores.size(); ++a)
    for (size_t b = a + 1; b < scores.size(); ++b)
      comparisons.push_back(masking::compare_scores(scores[a], scores[b]));
  print_comparisons(out, comparisons, setup.so.draws);

  json doc;
  doc["data"] = data_json;
  doc["settings"] = settings_json(setup, options);
  doc["seed"] = setup.so.seed;
  doc["schemes"] = json::array();
  for (const auto& s : scores) doc["schemes"].push_back(to_json(s));
  doc["comparisons"] = json::array();
  for (const auto& c : comparisons) doc["comparisons"].push_back(to_json(c));
  doc["seconds"] = elapsed();
  return doc;
}

}  // namespace moca::tools
