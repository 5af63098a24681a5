#pragma once
/// \file paper_figures.hpp
/// Figures of the reproduction (gnuplot PNG) from the JSON files the studies wrote into a
/// results folder. For each input present it writes <results>/figures/<name>.dat (the plotted
/// numbers, whitespace-separated with a header comment), <name>.gp (the gnuplot script, kept so
/// a figure can be restyled) and <name>.png:
/// * sigma1_by_scheme   (simulation_study.json: score with 95% CI per feature map, part, scheme,
///                       and the paper's 0.925 / 0.835)
/// * sigma1_vs_ratio    (simulation_study.json "ratio_sweep")
/// * coupling_sweep     (coupling_sweep.json: cross - sync difference with CI vs coupling)
/// * score_vs_loss      (theory_vs_training/report.json, policy_study's report: held-out
///                       own-policy MSE and probe accuracy, means over seeds, against the score)
/// * confusion_<k>      (table1.json: one heat map per model row)
/// * ablation_mask_ratio, ablation_patch_length (linear-probe accuracy)
/// Missing inputs are skipped (reported in the result); a malformed one is an error.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"

namespace moca::sim {

/// Options of run_paper_figures.
struct PaperFiguresOptions {
  std::string results = "paper/results";  ///< folder with the studies' JSON files
  bool png = true;                        ///< run gnuplot (false: only .dat and .gp)
  /// Throws std::invalid_argument when results is empty.
  void validate() const;

  /// The options a user sets (option_schema.hpp). `png` is the program's --no-png, a flag of its
  /// own: a row would rename it (--png,--no-png) and change its help and config key.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    v(o.results, Option{"PaperFiguresOptions", "results", "--results", "results folder"});
  }
};

/// Writes the figures; returns {"figures": [png paths relative to results], "skipped": [...]}.
/// std::runtime_error when gnuplot is missing or fails, or an input is malformed.
nlohmann::json run_paper_figures(const PaperFiguresOptions& options, std::ostream& log);

}  // namespace moca::sim
