#include "simulation_study.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"
#include "run_cli.hpp"
#include "scoring_options.hpp"

namespace moca::sim {

void SimulationStudyOptions::validate() const {
  const std::string f =
      "SimulationStudyOptions::";  // fields, which the program names by their flags
  data.validate();
  if (schemes.empty()) throw std::invalid_argument(f + "schemes is empty; give at least one");
  check_ranges(*this);  // ratio, patch_length (the scorer's: score.validate())
  if (features.empty()) throw std::invalid_argument(f + "features is empty");
  for (const auto& name : features) {
    if (name == "encoder") {
      if (!encoder) {
        throw std::invalid_argument(
            f +
            "features 'encoder' needs a checkpoint (--checkpoint) and a build with "
            "MOCA_WITH_TORCH=ON");
      }
    } else if (name != "raw" && name != "patch-mean") {
      throw std::invalid_argument(f + "features (" + name +
                                  ") is not one of raw, patch-mean, encoder");
    }
  }
  score.validate();
  for (double r : ratio_sweep) {
    if (!(r > 0.0 && r < 1.0)) {
      throw std::invalid_argument(f + "ratio_sweep value (" + std::to_string(r) +
                                  ") must be in (0, 1)");
    }
  }
}

namespace {
/// `score` with per-window masks on all channels (each part then sets its own views / mode).
masking::ScoreOptions full_views(masking::ScoreOptions score) {
  score.mask_mode = masking::MaskMode::kPerWindow;
  score.unmasked_channels.clear();
  score.masked_channels.clear();
  return score;
}

using nlohmann::json;

/// Scores the schemes with one feature map on each of its parts ("all", "acc->gyro", and for
/// the encoder the leak checks "all/shared-mask" and "mask-only"); table rows go to `table`.
json score_feature_map(const std::string& name, const data::Windows& w, const masking::Grid& grid,
                       const std::vector<std::unique_ptr<masking::MaskPolicy>>& policies,
                       const SimulationStudyOptions& options, std::ostream& log,
                       std::ostream& table) {
  const auto fmap = name == "encoder" ? options.encoder : masking::make_feature_map(name);
  json results = json::array();
  std::vector<std::string> parts = {"all"};
  if (options.cross_modal && name != "encoder" && grid.channels >= 2 && w.modalities.size() != 1)
    parts.push_back("acc->gyro");
  if (name == "encoder" && options.leak_checks) {
    parts.push_back("all/shared-mask");
    parts.push_back("mask-only");
  }
  // "mask-only": every window replaced by the mean window, so the features can only vary
  // with the masks: the level sigma_1 reaches from the mask pattern alone.
  data::Windows mean_windows;
  if (name == "encoder" && options.leak_checks) {
    mean_windows = w;
    const Eigen::RowVectorXf mean = w.x.colwise().mean();
    for (int i = 0; i < mean_windows.size(); ++i) mean_windows.x.row(i) = mean;
    mean_windows.description += " (every window replaced by the mean window)";
  }
  for (const auto& part : parts) {
    masking::ScoreOptions so = full_views(options.score);
    if (part == "acc->gyro") masking::use_cross_modal_views(so, w, "the acc->gyro part");
    if (part == "all/shared-mask") so.mask_mode = masking::MaskMode::kShared;
    masking::PolicyScorer scorer(part == "mask-only" ? mean_windows : w, grid, fmap, so);
    std::vector<masking::PolicyScore> scores;
    for (const auto& p : policies) {
      scores.push_back(scorer.score(*p));
      log << "simulation_study: " << name << " / " << part << " / " << p->spec() << ": "
          << masking::format_number(scores.back().mean) << " (" << scores.back().seconds << " s)\n";
    }
    json entry = {{"features", name}, {"part", part}};
    entry["schemes"] = json::array();
    for (const auto& s : scores) {
      entry["schemes"].push_back(masking::to_json(s));
      std::string paper = "";
      if (part == "all" && s.scheme == "cross") paper = "0.925";
      if (part == "all" && s.scheme == "sync") paper = "0.835";
      char line[256];
      std::snprintf(line, sizeof line, "%-12s %-9s %-22s %.4f   [%.4f, %.4f]   %.4f  %s\n",
                    name.c_str(), part.c_str(), s.spec.c_str(), s.mean, s.ci_low, s.ci_high,
                    s.null_level, paper.c_str());
      table << line;
    }
    entry["comparisons"] = masking::all_comparisons(scores);
    for (const auto& c : entry["comparisons"]) {
      char line[256];
      std::snprintf(line, sizeof line, "%-12s %-9s %s - %s = %+.4f  [%+.4f, %+.4f]  p = %.3g\n",
                    name.c_str(), part.c_str(), c["a"].get<std::string>().c_str(),
                    c["b"].get<std::string>().c_str(), c["difference"].get<double>(),
                    c["ci"][0].get<double>(), c["ci"][1].get<double>(), c["p_value"].get<double>());
      table << line;
    }
    results.push_back(entry);
  }
  return results;
}

/// sigma_1 vs mask ratio: the schemes at each ratio of options.ratio_sweep (full views).
json score_ratio_sweep(const data::Windows& w, const masking::Grid& grid,
                       const SimulationStudyOptions& options, std::ostream& table) {
  json sweep = json::array();
  for (double r : options.ratio_sweep) {
    for (const auto& name : options.features) {
      const auto fmap = name == "encoder" ? options.encoder : masking::make_feature_map(name);
      masking::PolicyScorer scorer(w, grid, fmap, full_views(options.score));
      for (const auto& spec : options.schemes) {
        const masking::PolicySpec parsed = masking::parse_policy_spec(spec);
        masking::PolicySpec at = parsed;
        at.options.erase(std::remove_if(at.options.begin(), at.options.end(),
                                        [](const auto& kv) { return kv.first == "ratio"; }),
                         at.options.end());
        const auto p = masking::make_policy(
            masking::with_default_ratio(masking::format_policy_spec(at), r), grid);
        const masking::PolicyScore s = scorer.score(*p);
        json e = masking::to_json(s);
        e["ratio"] = r;
        e["features"] = name;
        sweep.push_back(e);
        char line[256];
        std::snprintf(line, sizeof line, "ratio %-5s %-12s %-22s %.4f   [%.4f, %.4f]\n",
                      masking::format_number(r).c_str(), name.c_str(), s.spec.c_str(), s.mean,
                      s.ci_low, s.ci_high);
        table << line;
      }
    }
  }
  return sweep;
}

/// The JSON document's "settings" object: the study as it ran.
json study_settings_json(const SimulationStudyOptions& options) {
  json settings_json =
      scoring_settings_json(options.schemes, options.ratio, options.features, options.score,
                            options.patch_length, options.cross_modal);
  settings_json["leak_checks"] = options.leak_checks;
  settings_json["samples"] = options.data.samples;
  settings_json["split_seed"] = options.data.selection.split_seed;
  settings_json["data_seed"] = options.data.seed;
  settings_json["coupling"] = options.data.selection.coupling;
  settings_json["ratio_sweep"] = options.ratio_sweep;
  settings_json["mask_mode"] = "per-window";
  if (!options.encoder_source.empty()) settings_json["encoder"] = options.encoder_source;
  return settings_json;
}

}  // namespace

nlohmann::json run_simulation_study(const SimulationStudyOptions& options, std::ostream& out,
                                    std::ostream& log) {
  using nlohmann::json;
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  const StudyWindows data = transition_windows(options.data);
  const data::Windows& w = data.windows;
  log << "simulation_study: " << w.size() << " windows ("
      << data.description.value("source", std::string()) << ")\n";
  const masking::Grid grid = masking::make_grid(w.channels, w.length, options.patch_length);

  std::vector<std::unique_ptr<masking::MaskPolicy>> policies;
  for (const auto& spec : options.schemes) {
    policies.push_back(
        masking::make_policy(masking::with_default_ratio(spec, options.ratio), grid));
  }

  json results = json::array();
  std::ostringstream table;
  table << "feature map  part      scheme                 sigma_1   95% CI              null"
           "    paper\n";
  for (const auto& name : options.features) {
    for (auto& entry : score_feature_map(name, w, grid, policies, options, log, table))
      results.push_back(std::move(entry));
  }
  const json sweep = score_ratio_sweep(w, grid, options, table);
  out << table.str();
  out << "paper (encoder features, PCA 50, 1000 transitions): cross 0.925, sync 0.835\n";

  const json settings_json = study_settings_json(options);
  json doc = {
      {"study", "simulation_study"},
      {"data", data.description},
      {"settings", settings_json},
      {"seed", options.score.seed},
      {"paper",
       {{"cross", kPaperSigmaCross},
        {"sync", kPaperSigmaSync},
        {"features", "pre-trained encoder"},
        {"pca", 50},
        {"samples", 1000},
        {"draws", 1}}},
      {"results", results},
      {"ratio_sweep", sweep},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  tools::record_program_options(doc);
  if (!options.json.empty()) write_json(options.json, doc);
  return doc;
}

}  // namespace moca::sim
