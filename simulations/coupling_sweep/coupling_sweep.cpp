#include "coupling_sweep.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

#include "moca/data/synthetic.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"
#include "run_cli.hpp"
#include "scoring_options.hpp"
#include "study_data.hpp"

namespace moca::sim {

void CouplingSweepOptions::validate() const {
  const std::string f = "CouplingSweepOptions::";  // fields, which the program names by their flags
  if (couplings.size() < 2) {
    throw std::invalid_argument(f + "couplings has " + std::to_string(couplings.size()) +
                                " values; give at least 2");
  }
  for (double c : couplings) {
    if (!(c >= 0.0 && c <= 1.0)) {
      throw std::invalid_argument(f + "couplings (" + masking::format_number(c) +
                                  ") must be in [0, 1]");
    }
  }
  check_ranges(*this);  // samples, ratio, patch_length (the scorer's: score.validate())
  if (schemes.size() < 2) {
    throw std::invalid_argument(f + "schemes has " + std::to_string(schemes.size()) +
                                " specs; give at least 2 (the first two are compared)");
  }
  if (features.empty()) throw std::invalid_argument(f + "features is empty");
  for (const auto& n : features) {
    if (n != "raw" && n != "patch-mean") {
      throw std::invalid_argument(f + "features (" + n + ") is not one of raw, patch-mean");
    }
  }
  score.validate();
}

namespace {
using nlohmann::json;

/// The verdict per series ("features/part"): the couplings where the first scheme is
/// significantly above, below, or not distinguishable from the second; one line each to `out`.
json verdicts_of(const std::vector<std::string>& series_order,
                 const std::map<std::string, json>& series, const std::string& a_spec,
                 const std::string& b_spec, std::ostream& out) {
  json verdicts = json::array();
  for (const auto& key : series_order) {
    json above = json::array(), below = json::array(), tie = json::array();
    for (const auto& p : series.at(key)) {
      const double c = p[0], lo = p[2], hi = p[3];
      (lo > 0 ? above : (hi < 0 ? below : tie)).push_back(c);
    }
    const auto slash = key.find('/');
    json v = {{"features", key.substr(0, slash)},
              {"part", key.substr(slash + 1)},
              {"a", a_spec},
              {"b", b_spec},
              {"a_above_b", above},
              {"a_below_b", below},
              {"not_distinguishable", tie}};
    verdicts.push_back(v);
    out << key << ": " << a_spec << " above " << b_spec << " at c = " << above.dump()
        << "; below at " << below.dump() << "; not distinguishable at " << tie.dump() << "\n";
  }

  return verdicts;
}

/// The JSON document's "settings" object: the study as it ran.
json sweep_settings_json(const CouplingSweepOptions& options) {
  json j = scoring_settings_json(options.schemes, options.ratio, options.features, options.score,
                                 options.patch_length, options.cross_modal);
  j["couplings"] = options.couplings;
  j["samples"] = options.samples;
  j["data_seed"] = options.data_seed;
  return j;
}

/// The sweep's results as they come: one point per coupling, feature map and part, the table
/// rows, and per series ("features/part", in first-seen order) the list of (coupling,
/// difference, lo, hi) of the first scheme minus the second.
struct SweepResults {
  json points = json::array();
  std::string rows;
  std::map<std::string, json> series;
  std::vector<std::string> series_order;
};

/// The table header: the schemes' names, then the difference of the first two.
std::string table_header(const std::vector<std::unique_ptr<masking::MaskPolicy>>& policies) {
  std::string header = "coupling  features    part       ";
  for (const auto& p : policies) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-10s", p->name().c_str());
    header += buf;
  }
  return header + " " + policies[0]->name() + "-" + policies[1]->name() + " [95% CI]\n";
}

/// The table row of one point: coupling, feature map, part, the scores and the difference.
std::string table_row(double c, const std::string& fname, const std::string& part,
                      const std::vector<masking::PolicyScore>& scores,
                      const masking::PairedComparison& cmp) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-9s %-11s %-10s ", masking::format_number(c).c_str(),
                fname.c_str(), part.c_str());
  std::string row = buf;
  for (const auto& s : scores) {
    std::snprintf(buf, sizeof buf, "%-10.4f", s.mean);
    row += buf;
  }
  std::snprintf(buf, sizeof buf, " %+.4f [%+.4f, %+.4f]\n", cmp.difference, cmp.ci_low,
                cmp.ci_high);
  return row + buf;
}

/// Scores the schemes on the windows `w` of coupling c with one feature map on one part ("all"
/// or "acc->gyro", per-window masks) and adds the point, its table row and its series entry.
void score_point(const data::Windows& w, const masking::Grid& grid,
                 const std::shared_ptr<const masking::FeatureMap>& fmap, const std::string& fname,
                 const std::string& part,
                 const std::vector<std::unique_ptr<masking::MaskPolicy>>& policies,
                 const CouplingSweepOptions& options, double c, SweepResults& r) {
  masking::ScoreOptions sco = options.score;
  sco.mask_mode = masking::MaskMode::kPerWindow;
  sco.unmasked_channels.clear();
  sco.masked_channels.clear();
  if (part != "all") masking::use_cross_modal_views(sco, w, "the acc->gyro part");
  masking::PolicyScorer scorer(w, grid, fmap, sco);
  std::vector<masking::PolicyScore> scores;
  for (const auto& p : policies) scores.push_back(scorer.score(*p));
  const masking::PairedComparison cmp = masking::compare_scores(scores[0], scores[1]);
  json point = {{"coupling", c}, {"features", fname}, {"part", part}};
  point["schemes"] = json::array();
  for (const auto& s : scores) point["schemes"].push_back(masking::to_json(s));
  point["comparison"] = masking::to_json(cmp);
  r.points.push_back(point);
  const std::string key = fname + "/" + part;
  if (!r.series.count(key)) {
    r.series[key] = json::array();
    r.series_order.push_back(key);
  }
  r.series[key].push_back({c, cmp.difference, cmp.ci_low, cmp.ci_high});
  r.rows += table_row(c, fname, part, scores, cmp);
}

}  // namespace

nlohmann::json run_coupling_sweep(const CouplingSweepOptions& options, std::ostream& out,
                                  std::ostream& log) {
  using nlohmann::json;
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  SweepResults results;
  std::string header, a_spec, b_spec;
  for (double c : options.couplings) {
    data::SyntheticOptions so;
    so.windows = options.samples;
    so.coupling = c;
    so.seed = options.data_seed;
    const data::Windows w = data::generate_synthetic(so);
    const masking::Grid grid = masking::make_grid(w.channels, w.length, options.patch_length);
    std::vector<std::unique_ptr<masking::MaskPolicy>> policies;
    for (const auto& s : options.schemes) {
      policies.push_back(masking::make_policy(masking::with_default_ratio(s, options.ratio), grid));
    }
    a_spec = policies[0]->spec();
    b_spec = policies[1]->spec();
    if (header.empty()) header = table_header(policies);
    for (const auto& fname : options.features) {
      const auto fmap = masking::make_feature_map(fname);
      std::vector<std::string> parts = {"all"};
      if (options.cross_modal) parts.push_back("acc->gyro");
      for (const auto& part : parts) {
        score_point(w, grid, fmap, fname, part, policies, options, c, results);
        log << "coupling_sweep: c = " << masking::format_number(c) << " " << fname << "/" << part
            << " done ("
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s)\n";
      }
    }
  }
  out << header << results.rows;

  const json verdicts = verdicts_of(results.series_order, results.series, a_spec, b_spec, out);

  json doc = {
      {"study", "coupling_sweep"},
      {"data",
       {{"source", "generator"},
        {"windows", options.samples},
        {"length", 200},
        {"seed", options.data_seed},
        {"note", "same generator seed at every coupling"}}},
      {"settings", sweep_settings_json(options)},
      {"seed", options.score.seed},
      {"points", results.points},
      {"verdicts", verdicts},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  tools::record_program_options(doc);
  if (!options.json.empty()) write_json(options.json, doc);
  return doc;
}

}  // namespace moca::sim
