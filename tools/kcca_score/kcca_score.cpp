#include "kcca_score.hpp"

#include <algorithm>
#include <cstdio>

#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"

namespace moca::tools {

namespace {

std::string fmt(double v, int digits = 4) {
  return format_fixed(v, digits);
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
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
  masking::DataScore score = masking::score_data(options, log);
  print_scores(out, score.run);
  print_comparisons(out, score.run.comparisons, score.run.score.draws);
  record_program_options(score.json);
  if (!options.json.empty()) write_output_text(options.json, score.json.dump(2) + "\n");
  return score.json;
}

}  // namespace moca::tools
