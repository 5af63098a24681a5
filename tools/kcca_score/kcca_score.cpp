#include "kcca_score.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

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
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (schemes.empty() && policies.empty())
    fail("--scheme: no scheme given (valid: cross, random, sync, ...)");
  if (!(ratio > 0.0 && ratio < 1.0)) fail("--ratio (" + fmt(ratio) + ") must be in (0, 1)");
  if (samples < 3) fail("--samples (" + std::to_string(samples) + ") must be >= 3");
  if (!feature_map && features != "raw" && features != "patch-mean" && features != "rff-mean")
    fail("--features (" + features + ") must be one of: raw, patch-mean, rff-mean");
  masking::parse_estimator(estimator);
  if (mask_mode != "auto") masking::parse_mask_mode(mask_mode);
  kcca::parse_kernel_type(kernel);
  if (pca < 1) fail("--pca (" + std::to_string(pca) + ") must be >= 1");
  if (!(gamma > 0.0) || !std::isfinite(gamma)) fail("--gamma (" + fmt(gamma) + ") must be > 0");
  if (!(sigma >= 0.0) || !std::isfinite(sigma))
    fail("--sigma (" + fmt(sigma) + ") must be >= 0 (0 = median heuristic)");
  if (draws < 2) fail("--draws (" + std::to_string(draws) + ") must be >= 2");
  if (!(coupling >= 0.0 && coupling <= 1.0))
    fail("--coupling (" + fmt(coupling) + ") must be in [0, 1]");
  if (patch_length < 1 || dataset.length % patch_length != 0)
    fail("--patch-length (" + std::to_string(patch_length) + ") must divide the window length " +
         std::to_string(dataset.length) + " (e.g. 10, 20, 25, 40, 50 for 200)");
  if (transitions < -1)
    fail("--transitions (" + std::to_string(transitions) + ") must be >= 0 (0 = the windows)");
  dataset.validate();
  if (threads < 0) fail("--threads (" + std::to_string(threads) + ") must be >= 0");
}

std::string effective_mask_mode(const KccaScoreOptions& options) {
  if (options.mask_mode != "auto") return options.mask_mode;
  return options.feature_map ? "shared" : "per-window";
}

nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log) {
  using nlohmann::json;
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();

  // ---- data ----------------------------------------------------------------------------------
  const std::uint64_t data_seed = derive_seed(options.seed, 0x64617461ULL);
  data::DatasetOptions dopt = options.dataset;
  dopt.generator.windows = options.samples;
  dopt.generator.coupling = options.coupling;
  dopt.generator.seed = data_seed;
  const data::Dataset ds = data::open_dataset(options.data, dopt);
  log << "kcca_score: data: " << ds.summary() << "\n";
  for (const auto& note : ds.notes) log << "kcca_score: data: " << note << "\n";
  json data_json = ds.to_json();
  data::Windows windows;
  const int transitions = options.transitions >= 0                    ? options.transitions
                          : ds.spec.format == data::DataFormat::kHapt ? options.samples
                                                                      : 0;
  if (transitions > 0) {
    const data::Windows& all = ds.windows;
    const data::Split split = data::random_split(all.size(), 0.7, options.split_seed);
    const data::Windows train = all.subset(split.train);
    windows = data::synthetic_transitions(train, transitions, data_seed);
    log << "kcca_score: scoring " << windows.size()
        << " synthetic transitions (Algorithm 1) from the training split of " << train.size()
        << " windows (random 7:3, seed " << options.split_seed << ")\n";
    data_json["scored"] = "Algorithm-1 transitions";
    data_json["train_windows"] = train.size();
    data_json["split"] = "random 7:3";
    data_json["split_seed"] = options.split_seed;
    data_json["transitions"] = windows.size();
    data_json["transition_seed"] = data_seed;
  } else {
    windows = ds.windows;
    std::string how = "all";
    if (windows.size() > options.samples) {
      std::vector<int> rows = data::numpy_legacy_permutation(
          windows.size(), static_cast<std::uint32_t>(data_seed & 0xffffffffULL));
      rows.resize(static_cast<size_t>(options.samples));
      std::sort(rows.begin(), rows.end());
      windows = windows.subset(rows);
      how = "a seeded random subset (--samples)";
    }
    log << "kcca_score: scoring " << windows.size() << " of the data's " << ds.windows.size()
        << " windows (" << how << ")\n";
    data_json["scored"] = "windows";
    data_json["scored_windows"] = windows.size();
  }
  json doc = score_windows(windows, data_json, options, out, log);
  doc["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options.json.empty()) write_output_text(options.json, doc.dump(2) + "\n");
  return doc;
}

nlohmann::json score_windows(const data::Windows& windows, nlohmann::json data_json,
                             const KccaScoreOptions& options, std::ostream& out,
                             std::ostream& log) {
  using nlohmann::json;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  options.validate();
  data_json["channels"] = windows.channel_names;
  data_json["sample_rate_hz"] = windows.sample_rate_hz;
  data_json["description"] = windows.description;
  if (!data_json.contains("source")) data_json["source"] = "windows";

  // ---- policies and scorer --------------------------------------------------------------------
  const masking::Grid grid =
      masking::make_grid(windows.channels, windows.length, options.patch_length);
  std::shared_ptr<const masking::FeatureMap> features =
      options.feature_map ? options.feature_map : masking::make_feature_map(options.features);
  masking::ScoreOptions so;
  so.estimator = masking::parse_estimator(options.estimator);
  const std::string mask_mode = effective_mask_mode(options);
  so.mask_mode = masking::parse_mask_mode(mask_mode);
  so.draws = options.draws;
  so.pca = options.pca;
  so.kernel = kcca::parse_kernel_type(options.kernel);
  so.gamma = options.gamma;
  so.sigma = options.sigma;
  so.seed = options.seed;
  so.threads = options.threads;
  std::string views = "all channels";
  if (options.cross_modal) {
    masking::use_cross_modal_views(so, windows, "--cross-modal");
    if (options.features == "rff-mean" && !options.feature_map)
      throw std::invalid_argument(
          "--cross-modal needs per-channel features (raw, patch-mean), "
          "not rff-mean");
    auto list = [](const std::vector<int>& ch) {
      std::string t;
      for (int c : ch) t += (t.empty() ? "" : ",") + std::to_string(c);
      return t;
    };
    views = "unmasked channels " + list(so.unmasked_channels) + " vs masked channels " +
            list(so.masked_channels) + " (cross-modal part)";
  }
  masking::PolicyContext ctx;
  ctx.pilot = &windows;
  ctx.features = features;
  std::vector<std::shared_ptr<const masking::MaskPolicy>> policies;
  for (const auto& s : options.schemes) {
    policies.push_back(
        masking::make_policy(masking::with_default_ratio(s, options.ratio), grid, ctx));
  }
  policies.insert(policies.end(), options.policies.begin(), options.policies.end());
  masking::PolicyScorer scorer(windows, grid, features, so);

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

  // ---- table ---------------------------------------------------------------------------------
  out << "kcca_score: " << windows.size() << " windows (" << data_json["source"].get<std::string>()
      << "), grid " << grid.channels << " x " << grid.patches << " patches of " << grid.patch_length
      << ", features " << features->name() << ", estimator " << options.estimator
      << (so.estimator == masking::Estimator::kCca
              ? " (PCA " + std::to_string(options.pca) + ")"
              : " (" + options.kernel + ", gamma " + masking::format_number(options.gamma) + ")")
      << ", views " << views << ", " << mask_mode << " masks, " << options.draws << " draws, seed "
      << options.seed << "\n\n";
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

  std::vector<masking::PairedComparison> comparisons;
  for (size_t a = 0; a < scores.size(); ++a)
    for (size_t b = a + 1; b < scores.size(); ++b)
      comparisons.push_back(masking::compare_scores(scores[a], scores[b]));
  if (!comparisons.empty()) {
    out << "\npaired differences (same windows, common random numbers; paired t-test, "
        << options.draws - 1 << " df)\n";
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

  // ---- JSON ----------------------------------------------------------------------------------
  json doc;
  doc["data"] = data_json;
  doc["options"] = {{"schemes", options.schemes},
                    {"ratio", options.ratio},
                    {"samples", options.samples},
                    {"features", features->name()},
                    {"estimator", options.estimator},
                    {"pca", options.pca},
                    {"kernel", options.kernel},
                    {"gamma", options.gamma},
                    {"sigma", options.sigma},
                    {"draws", options.draws},
                    {"mask_mode", mask_mode},
                    {"coupling", options.coupling},
                    {"patch_length", options.patch_length},
                    {"cross_modal", options.cross_modal},
                    {"views", views},
                    {"grid",
                     {{"channels", grid.channels},
                      {"patches", grid.patches},
                      {"patch_length", grid.patch_length}}},
                    {"ci", "95% Student t, R-1 df"},
                    {"null_level", so.estimator == masking::Estimator::kCca
                                       ? "Wachter edge for (pca, pca, n)"
                                       : "KCCA rho_1 with the masked view's rows permuted"}};
  doc["seed"] = options.seed;
  doc["schemes"] = json::array();
  for (const auto& s : scores) doc["schemes"].push_back(to_json(s));
  doc["comparisons"] = json::array();
  for (const auto& c : comparisons) doc["comparisons"].push_back(to_json(c));
  doc["seconds"] = elapsed();
  return doc;
}

}  // namespace moca::tools
