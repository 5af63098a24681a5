#include "kcca_score.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/dataset.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"

namespace moca::tools {

namespace {

std::string fmt(double v, int digits = 4) {
  return format_fixed(v, digits);
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

}  // namespace

void KccaScoreOptions::validate() const {
  scoring.validate();
  if (samples < 3) throw_invalid("", "--samples", std::to_string(samples), "must be >= 3");
  if (!(data.coupling >= 0.0 && data.coupling <= 1.0))
    throw_invalid("", "--coupling", fmt(data.coupling), "must be in [0, 1]");
  if (scoring.patch_length < 1 || data.window_length % scoring.patch_length != 0)
    throw_invalid("", "--patch-length", std::to_string(scoring.patch_length),
                  "must divide the window length " + std::to_string(data.window_length) +
                      " (e.g. 10, 20, 25, 40, 50 for 200)");
  if (transitions < -1)
    throw_invalid("", "--transitions", std::to_string(transitions),
                  "must be >= 0 (0 = the windows)");
  data.validate();
  data.dataset.validate();
}

namespace {

using nlohmann::json;

/// The windows a run scores and the "data" JSON describing them.
struct LoadedWindows {
  data::Windows windows;
  json data_json;
};

/// Opens options.data and picks the windows scored: Algorithm-1 transitions built from the random
/// 7:3 training split, or the data's windows (a seeded random subset of `samples`).
LoadedWindows load_windows(const KccaScoreOptions& options, std::ostream& log) {
  const std::uint64_t data_seed = derive_seed(options.scoring.score.seed, 0x64617461ULL);
  data::DataOptions selection = options.data;
  selection.synthetic_windows = options.samples;
  selection.synthetic_seed = data_seed;
  const data::Dataset ds = data::select(selection);
  log << "kcca_score: data: " << ds.summary() << "\n";
  for (const auto& note : ds.notes) log << "kcca_score: data: " << note << "\n";
  const int transitions = options.transitions >= 0 ? options.transitions
                          : data::format_entry(ds.spec.format).transitions_by_default
                              ? options.samples
                              : 0;
  data::WindowSample sample =
      data::sample_windows(ds.windows, selection, transitions, options.samples, data_seed);
  LoadedWindows out{std::move(sample.windows), ds.to_json()};
  if (transitions > 0) {
    log << "kcca_score: scoring " << out.windows.size()
        << " synthetic transitions (Algorithm 1) from the training split of "
        << sample.train_windows << " windows (random 7:3, seed " << selection.split_seed << ")\n";
    out.data_json["scored"] = "Algorithm-1 transitions";
    out.data_json["train_windows"] = sample.train_windows;
    out.data_json["split"] = "random 7:3";
    out.data_json["split_seed"] = selection.split_seed;
    out.data_json["transitions"] = out.windows.size();
    out.data_json["transition_seed"] = data_seed;
    return out;
  }
  log << "kcca_score: scoring " << out.windows.size() << " of the data's " << ds.windows.size()
      << " windows (" << (sample.subset ? "a seeded random subset (--samples)" : "all") << ")\n";
  out.data_json["scored"] = "windows";
  out.data_json["scored_windows"] = out.windows.size();
  return out;
}

/// The table's header line and one row per scheme, then the schemes' warnings.
void print_scores(std::ostream& out, const masking::ScoreRun& run) {
  const masking::Grid& grid = run.grid;
  const masking::ScoreOptions& so = run.score;
  const std::vector<masking::PolicyScore>& scores = run.scores;
  out << "kcca_score: " << run.windows << " windows (" << run.data["source"].get<std::string>()
      << "), grid " << grid.channels << " x " << grid.patches << " patches of " << grid.patch_length
      << ", features " << run.features << ", estimator " << masking::to_string(so.estimator)
      << (so.estimator == masking::Estimator::kCca
              ? " (PCA " + std::to_string(so.pca) + ")"
              : " (" + kcca::kernel_type_name(so.kernel) + ", gamma " +
                    masking::format_number(so.gamma) + ")")
      << ", views " << run.views << ", " << masking::to_string(so.mask_mode) << " masks, "
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

}  // namespace

nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();
  LoadedWindows loaded = load_windows(options, log);
  masking::ScoreProgress progress;
  if (options.progress)
    progress = [&log](const std::string& line) { log << "kcca_score: " << line << "\n"; };
  const masking::ScoreRun run = masking::score_windows(loaded.windows, std::move(loaded.data_json),
                                                       options.scoring, progress);
  print_scores(out, run);
  print_comparisons(out, run.comparisons, run.score.draws);
  json doc = masking::to_json(run);
  doc["settings"]["samples"] = options.samples;
  doc["settings"]["coupling"] = options.data.coupling;
  doc["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options.recorded_options.empty()) doc["options"] = options.recorded_options;
  if (!options.json.empty()) write_output_text(options.json, doc.dump(2) + "\n");
  return doc;
}

}  // namespace moca::tools
