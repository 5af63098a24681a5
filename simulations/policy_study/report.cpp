// policy_study --report: tables, statistics and figures from the ledger alone.
//
// build_policy_study_report reads the ledger into one row per policy (read_study_ledger), then
// builds each part of the report from those rows: the per-policy table and its seed noise
// (policy_table), the score-vs-outcome correlations (correlations), adaptive policies against
// their bases (adaptive_vs_base), the figures (write_figures) and report.md (report_markdown).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/masking/policy_spec.hpp"
#include "policy_study.hpp"
#include "study_data.hpp"
#include "study_statistics.hpp"

namespace moca::sim {

namespace {

using nlohmann::json;

struct Outcome {
  std::string name;   // e.g. "own_mse", "task_mse:random:ratio=0.7"
  std::string label;  // for tables and axes
  int sign = -1;      // predicted sign of the association with the score
};

double outcome_of(const json& run, const Outcome& o) {
  const json& out = run.at("outcomes");
  const auto colon = o.name.find(':');
  if (o.name.rfind("task_mse:", 0) == 0) return out.at("task_mse").at(o.name.substr(colon + 1));
  return out.at(o.name).get<double>();
}

struct PolicyRow {
  std::string policy, family, group;
  double ratio = 0.0;
  std::map<std::string, std::pair<double, double>> scores;  // features -> (score, se)
  std::map<long, const json*> runs;                         // seed -> run record
};

/// The outcome of every run of a policy, in seed order.
std::vector<double> run_outcomes(const PolicyRow& row, const Outcome& o) {
  std::vector<double> v;
  for (const auto& r : row.runs) v.push_back(outcome_of(*r.second, o));
  return v;
}

std::string fmt(double v, int digits = 4) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string fmt_signed(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%+.3f", v);
  return b;
}

json estimate_json(const BootstrapEstimate& e) {
  if (e.degenerate) return {{"degenerate", true}};
  return {{"value", e.value}, {"ci", {e.ci_low, e.ci_high}}, {"resamples", e.resamples}};
}

std::string estimate_text(const BootstrapEstimate& e) {
  if (e.degenerate) return "undefined";
  return fmt_signed(e.value) + " [" + fmt_signed(e.ci_low) + ", " + fmt_signed(e.ci_high) + "]";
}

/// The base policy of an adaptive spec (its options minus the adaptive ones), canonical order
/// as written in the study's policy list when present there.
std::string adaptive_base(const std::string& spec, const std::vector<std::string>& policies) {
  const masking::PolicySpec s = masking::parse_policy_spec(spec);
  if (s.name != "adaptive") return {};
  masking::PolicySpec b;
  const std::string* base = s.find("base");
  b.name = base ? *base : "cross";
  const std::set<std::string> own = {"base",  "beta", "candidates", "seed",
                                     "pilot", "pca",  "features"};
  for (const auto& kv : s.options) {
    if (!own.count(kv.first)) b.options.push_back(kv);
  }
  const std::string text = masking::format_policy_spec(b);
  for (const auto& p : policies) {
    if (masking::format_policy_spec(masking::parse_policy_spec(p)) == text) return p;
    // A base written without its ratio key matches the adaptive policy's default ratio.
    if (masking::with_default_ratio(p, 0.75) == masking::with_default_ratio(text, 0.75)) return p;
  }
  return {};
}

// ---- the ledger, read into rows ----

/// The ledger's records and what the report needs of them. `rows` point into `records`.
struct StudyLedger {
  std::vector<json> records;
  json settings, data;
  std::vector<std::string> policies, features;
  int resamples = 0;
  std::uint64_t seed = 0;
  std::map<std::string, PolicyRow> rows;  // policy -> its scores and runs
  std::vector<std::string> task_names;    // the common tasks, as the first run names them
  int n_runs = 0;
};

/// Adds the "score" and "run" records of the study's policies to their rows.
void collect_records(StudyLedger& L) {
  for (const json& r : L.records) {
    if (r.at("kind") == "score") {
      const std::string p = r.at("policy");
      if (!L.rows.count(p)) continue;
      const json& s = r.at("score");
      L.rows[p].scores[r.at("features")] = {s.at("score").get<double>(),
                                            s.at("std_error").get<double>()};
      if (r.at("features") == "raw" || L.rows[p].ratio == 0.0) {
        L.rows[p].ratio = s.at("masked_fraction").get<double>();
      }
    } else if (r.at("kind") == "run") {
      const std::string p = r.at("policy");
      if (!L.rows.count(p)) continue;
      L.rows[p].runs[r.at("seed").get<long>()] = &r;
      ++L.n_runs;
      if (L.task_names.empty()) {
        for (const auto& kv : r.at("outcomes").at("task_mse").items())
          L.task_names.push_back(kv.key());
      }
    }
  }
}

/// Reads the ledgers of `dir` (ledger.jsonl and the shards', merged): the study record's
/// settings and one row per policy, its family, masked fraction and ratio group (the spec's
/// ratio, else the masked fraction to 2 digits).
StudyLedger read_study_ledger(const std::string& dir) {
  StudyLedger L;
  L.records = read_study_ledgers(dir, "--report");
  L.settings = L.records.front().at("settings");
  L.data = L.records.front().at("data");
  L.policies = L.settings.at("policies").get<std::vector<std::string>>();
  L.features = L.settings.at("features").get<std::vector<std::string>>();
  L.resamples = L.settings.at("resamples").get<int>();
  L.seed = L.settings.at("seed").get<std::uint64_t>();
  for (const auto& p : L.policies) {
    L.rows[p].policy = p;
    L.rows[p].family = masking::parse_policy_spec(p).name;
  }
  collect_records(L);
  for (auto& kv : L.rows) {
    const masking::PolicySpec s = masking::parse_policy_spec(kv.first);
    const std::string* ratio = s.find("ratio");
    kv.second.group = ratio ? *ratio : fmt(std::round(kv.second.ratio * 100) / 100, 2);
  }
  return L;
}

/// The outcomes of the report: own and mean task MSE, each task's MSE, the probe's metrics.
std::vector<Outcome> study_outcomes(const std::vector<std::string>& task_names) {
  std::vector<Outcome> outcomes = {{"own_mse", "MSE under own masks", -1},
                                   {"task_mse_mean", "MSE, mean of the common tasks", -1}};
  for (const auto& t : task_names) outcomes.push_back({"task_mse:" + t, "MSE, task " + t, -1});
  outcomes.push_back({"probe_top1", "linear-probe top-1", +1});
  outcomes.push_back({"probe_macro_f1", "linear-probe macro-F1", +1});
  return outcomes;
}

// ---- the parts of the report ----

/// The per-policy table (report.json "policies") and the median between-seed SD per outcome
/// ("seed_noise_median_sd": a difference smaller than it is noise).
struct PolicyTable {
  json policies = json::array();
  json noise = json::object();
};

PolicyTable policy_table(const StudyLedger& L, const std::vector<Outcome>& outcomes) {
  PolicyTable t;
  std::map<std::string, std::vector<double>> sds;
  for (const auto& p : L.policies) {
    const PolicyRow& row = L.rows.at(p);
    json j = {{"policy", p},
              {"family", row.family},
              {"masked_fraction", row.ratio},
              {"ratio_group", row.group},
              {"seeds", row.runs.size()}};
    for (const auto& s : row.scores)
      j["scores"][s.first] = {{"score", s.second.first}, {"std_error", s.second.second}};
    for (const Outcome& o : outcomes) {
      const std::vector<double> v = run_outcomes(row, o);
      if (v.empty()) continue;
      j["outcomes"][o.name] = {{"mean", mean_of(v)}, {"seed_sd", sample_sd(v)}, {"values", v}};
      if (v.size() >= 2) sds[o.name].push_back(sample_sd(v));
    }
    t.policies.push_back(j);
  }
  for (auto& kv : sds) {
    std::sort(kv.second.begin(), kv.second.end());
    const size_t n = kv.second.size();
    t.noise[kv.first] = n % 2 ? kv.second[n / 2] : 0.5 * (kv.second[n / 2 - 1] + kv.second[n / 2]);
  }
  return t;
}

/// A part of the report as JSON records and the rows of its markdown table.
struct ReportSection {
  json records = json::array();
  std::string table;
};

/// The policies that have a score under `features` and at least one run, with `o`'s values.
std::vector<PolicyData> policy_data(const StudyLedger& L, const std::string& features,
                                    const Outcome& o) {
  std::vector<PolicyData> data;
  for (const auto& p : L.policies) {
    const PolicyRow& row = L.rows.at(p);
    if (!row.scores.count(features) || row.runs.empty()) continue;
    PolicyData d;
    d.policy = p;
    d.family = row.family;
    d.ratio = row.ratio;
    d.group = row.group;
    d.score = row.scores.at(features).first;
    d.score_se = row.scores.at(features).second;
    d.outcomes = run_outcomes(row, o);
    data.push_back(d);
  }
  return data;
}

/// Score vs outcome for one feature map and outcome (>= 3 policies): Spearman, Kendall, partial
/// Spearman given the ratio (>= 4 policies), Kendall within ratio groups and the verdicts.
void add_correlation(const std::vector<PolicyData>& data, const std::string& f, const Outcome& o,
                     int resamples, std::uint64_t s, ReportSection& section) {
  const int n = static_cast<int>(data.size());
  // With 3 policies no correlation is detectable at 80 % power: rho_min = 1.
  const double rho_min = n >= 4 ? smallest_detectable_rho(n) : 1.0;
  const auto rho = two_level_bootstrap(data, spearman_statistic(), resamples, s);
  const auto tau = two_level_bootstrap(data, kendall_statistic(), resamples, s + 1);
  BootstrapEstimate partial;  // needs 4 policies
  partial.degenerate = true;
  if (n >= 4) partial = two_level_bootstrap(data, partial_spearman_statistic(), resamples, s + 2);
  const auto within = two_level_bootstrap(data, within_ratio_kendall_statistic(), resamples, s + 3);
  const std::string v = verdict(rho, o.sign, rho_min);
  const std::string vp = verdict(partial, o.sign, rho_min);
  section.records.push_back({{"features", f},
                             {"outcome", o.name},
                             {"predicted_sign", o.sign},
                             {"policies", n},
                             {"rho_min", rho_min},
                             {"spearman", estimate_json(rho)},
                             {"kendall", estimate_json(tau)},
                             {"partial_spearman_given_ratio", estimate_json(partial)},
                             {"within_ratio_kendall", estimate_json(within)},
                             {"verdict", v},
                             {"verdict_given_ratio", vp}});
  std::ostringstream row;
  row << "| " << f << " | " << o.label << " | " << (o.sign < 0 ? "−" : "+") << " | " << n << " | "
      << estimate_text(rho) << " | " << estimate_text(tau) << " | " << estimate_text(partial)
      << " | " << estimate_text(within) << " | " << v << " | " << vp << " |\n";
  section.table += row.str();
}

/// Does the score predict the outcome? One entry per feature map and outcome with >= 3
/// policies; each pair (counted whether or not it has enough policies) has its own seed stream.
ReportSection correlations(const StudyLedger& L, const std::vector<Outcome>& outcomes) {
  ReportSection section;
  std::uint64_t stream = 0;
  for (const std::string& f : L.features) {
    for (const Outcome& o : outcomes) {
      const std::vector<PolicyData> data = policy_data(L, f, o);
      ++stream;
      if (data.size() < 3) continue;
      add_correlation(data, f, o, L.resamples, derive_seed(derive_seed(L.seed, 40), stream),
                      section);
    }
  }
  return section;
}

/// Each adaptive policy against its base, paired over the seeds both have (>= 2), beside the
/// median between-seed SD `noise`.
ReportSection adaptive_vs_base(const StudyLedger& L, const std::vector<Outcome>& outcomes,
                               const json& noise) {
  ReportSection section;
  std::ostringstream table;
  for (const auto& p : L.policies) {
    const std::string base = adaptive_base(p, L.policies);
    if (base.empty()) continue;
    for (const Outcome& o : outcomes) {
      std::vector<double> a, b;
      for (const auto& r : L.rows.at(p).runs) {
        const auto it = L.rows.at(base).runs.find(r.first);
        if (it == L.rows.at(base).runs.end()) continue;
        a.push_back(outcome_of(*r.second, o));
        b.push_back(outcome_of(*it->second, o));
      }
      if (a.size() < 2) continue;
      const PairedDifferenceCI d = paired_difference(a, b);
      const double sd = noise.contains(o.name) ? noise.at(o.name).get<double>() : 0.0;
      const bool is_noise = std::abs(d.mean) < sd;
      section.records.push_back({{"adaptive", p},
                                 {"base", base},
                                 {"outcome", o.name},
                                 {"seeds", d.n},
                                 {"difference", d.mean},
                                 {"sd", d.sd},
                                 {"ci", {d.ci_low, d.ci_high}},
                                 {"smaller_than_seed_noise", is_noise}});
      table << "| " << p << " | " << o.label << " | " << d.n << " | " << fmt_signed(d.mean) << " ["
            << fmt_signed(d.ci_low) << ", " << fmt_signed(d.ci_high) << "] | "
            << (is_noise ? "noise (< median seed SD)" : "") << " |\n";
    }
  }
  section.table = table.str();
  return section;
}

// ---- figures ----

/// One scatter: score vs mean outcome with seed-SD bars, one block (and colour) per family.
/// Writes `base`.dat and `base`.gp; false when no policy has both a score and a run.
bool write_figure_files(const StudyLedger& L, const std::string& f, const Outcome& o,
                        const std::string& base) {
  std::map<std::string, std::string> blocks;
  for (const auto& p : L.policies) {
    const PolicyRow& row = L.rows.at(p);
    if (!row.scores.count(f) || row.runs.empty()) continue;
    const std::vector<double> v = run_outcomes(row, o);
    char line[256];
    std::snprintf(line, sizeof line, "%.6g\t%.6g\t%.6g\t%.6g\n", row.scores.at(f).first, mean_of(v),
                  sample_sd(v), row.scores.at(f).second);
    blocks[row.family] += line;
  }
  if (blocks.empty()) return false;
  std::string dat = "# score\tmean outcome\tseed sd\tscore se; one block per family\n";
  std::string plot = "plot ";
  int index = 0;
  for (const auto& kv : blocks) {
    dat += "# " + kv.first + "\n" + kv.second + "\n\n";
    plot += std::string(index ? ", " : "") + gnuplot_quoted(base + ".dat") + " index " +
            std::to_string(index) + " using 1:2:3 with yerrorbars pt 7 ps 1.2 lc " +
            std::to_string(index + 1) + " title '" + kv.first + "'";
    ++index;
  }
  write_output_text(base + ".dat", dat);
  const std::string gp =
      "set terminal pngcairo size 800,560 font 'DejaVu Sans,10'\nset output " +
      gnuplot_quoted(base + ".png") + "\nset title 'score (" + f + ") vs " + o.label +
      " (mean over seeds, bars: seed SD)' noenhanced\nset xlabel 'E_m[Phi(m)], " + f +
      " features' noenhanced\nset ylabel '" + o.label +
      "' noenhanced\nset grid\nset key outside right noenhanced\n" + plot + "\n";
  write_output_text(base + ".gp", gp);
  return true;
}

/// One figure per feature map and outcome in `dir`/figures (.dat, .gp, and the .png when `png`
/// and gnuplot is installed); returns the PNGs written, relative to `dir`.
json write_figures(const std::string& dir, const StudyLedger& L,
                   const std::vector<Outcome>& outcomes, bool png, std::ostream& log) {
  const std::string fig_dir = dir + "/figures";
  std::filesystem::create_directories(fig_dir);
  const bool have_gnuplot = png && gnuplot_available();
  json figs = json::array();
  for (const std::string& f : L.features) {
    for (const Outcome& o : outcomes) {
      std::string safe = o.name;
      for (char& ch : safe) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_') ch = '_';
      }
      const std::string base = fig_dir + "/" + f + "_" + safe;
      if (!write_figure_files(L, f, o, base)) continue;
      if (have_gnuplot) {
        const int status = run_gnuplot_script(base + ".gp", GnuplotOutput::kDiscard);
        if (status != 0) {
          throw std::runtime_error("policy_study --report: gnuplot failed on " + base + ".gp");
        }
        figs.push_back("figures/" + f + "_" + safe + ".png");
      }
    }
  }
  if (png && !have_gnuplot) log << "policy_study: gnuplot not found; wrote .dat/.gp files only\n";
  return figs;
}

// ---- report.md ----

/// The markdown table of the policies: masked fraction, scores ± SE, outcomes ± seed SD.
std::string policies_markdown(const std::vector<std::string>& features, const json& policies) {
  std::ostringstream md;
  md << "## Policies (mean over seeds ± between-seed SD)\n\n| policy | masked | ";
  for (const auto& f : features) md << f << " score ± SE | ";
  md << "own MSE | task MSE (mean) | probe top-1 | probe macro-F1 | seeds |\n|";
  for (size_t i = 0; i < features.size() + 7; ++i) md << " --- |";
  md << "\n";
  for (const auto& j : policies) {
    md << "| " << j.at("policy").get<std::string>() << " | " << fmt(j.at("masked_fraction"), 3)
       << " | ";
    for (const auto& f : features) {
      if (j.contains("scores") && j["scores"].contains(f)) {
        md << fmt(j["scores"][f]["score"]) << " ± " << fmt(j["scores"][f]["std_error"]);
      }
      md << " | ";
    }
    for (const char* name : {"own_mse", "task_mse_mean", "probe_top1", "probe_macro_f1"}) {
      if (j.contains("outcomes") && j["outcomes"].contains(name)) {
        md << fmt(j["outcomes"][name]["mean"]) << " ± " << fmt(j["outcomes"][name]["seed_sd"]);
      }
      md << " | ";
    }
    md << j.at("seeds") << " |\n";
  }
  return md.str();
}

std::string report_markdown(const StudyLedger& L, const PolicyTable& table,
                            const ReportSection& corr, const ReportSection& adaptive) {
  std::ostringstream md;
  // the split's kind: the words before the colon of the data record's "split"
  const std::string split = L.data.at("split").get<std::string>();
  md << "# policy_study report\n\nBuilt from `ledger.jsonl` alone (" << L.records.size()
     << " records, " << L.n_runs << " runs). Data: `" << L.data.at("source").dump() << "`, "
     << L.data.at("train_windows") << " training / " << L.data.at("test_windows")
     << " held-out windows (" << split.substr(0, split.find(':')) << ").\n\n";
  md << policies_markdown(L.features, table.policies);
  md << "\nMedian between-seed SD per outcome (differences below it are noise): `"
     << table.noise.dump() << "`\n\n";
  md << "## Does the score predict the outcome? (two-level bootstrap 95 % CIs)\n\n"
        "| features | outcome | predicted sign | policies | Spearman | Kendall | partial "
        "Spearman given ratio | Kendall within ratio | verdict | verdict given ratio |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
     << corr.table;
  if (!corr.records.empty()) {
    md << "\nSmallest detectable |ρ| (80 % power, 5 % two-sided) at "
       << corr.records.front().at("policies")
       << " policies: " << fmt(corr.records.front().at("rho_min"), 2) << ".\n";
  }
  md << "\n## Adaptive vs its base (paired over seeds, Student-t 95 % CI)\n\n"
        "| adaptive | outcome | seeds | difference [CI] | |\n| --- | --- | --- | --- | --- |\n"
     << adaptive.table;
  return md.str();
}

}  // namespace

nlohmann::json build_policy_study_report(const std::string& dir, std::ostream& out,
                                         std::ostream& log, bool png) {
  const StudyLedger L = read_study_ledger(dir);
  const std::vector<Outcome> outcomes = study_outcomes(L.task_names);
  const PolicyTable table = policy_table(L, outcomes);
  const ReportSection corr = correlations(L, outcomes);
  const ReportSection adaptive = adaptive_vs_base(L, outcomes, table.noise);

  json report = {{"study", "policy_study"},
                 {"settings", L.settings},
                 {"data", L.data},
                 {"runs", L.n_runs},
                 {"records", L.records.size()}};
  // the options of the invocation that started the study (resumed ones may differ in --jobs)
  if (L.records.front().contains("options")) report["options"] = L.records.front().at("options");
  report["policies"] = table.policies;
  report["seed_noise_median_sd"] = table.noise;
  report["correlations"] = corr.records;
  report["adaptive_vs_base"] = adaptive.records;
  report["figures"] = write_figures(dir, L, outcomes, png, log);

  write_output_text(dir + "/report.md", report_markdown(L, table, corr, adaptive));
  write_json(dir + "/report.json", report);
  out << "policy_study: " << L.n_runs << " runs; verdicts (features | outcome | sign | n | "
      << "Spearman | Kendall | partial | within-ratio | verdict | given ratio):\n"
      << corr.table << "report: " << dir << "/report.md\n";
  return report;
}

}  // namespace moca::sim
