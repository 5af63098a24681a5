#pragma once
/// \file kcca_score.hpp
/// The body of the `kcca_score` tool: opens the data, picks the windows scored, calls
/// masking::score_windows(), prints the table and writes JSON. main() only parses flags into
/// KccaScoreOptions and calls run_kcca_score().
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/data/selection.hpp"
#include "moca/masking/score_run.hpp"

namespace moca::tools {

/// Options of kcca_score (the flags; defaults as documented in docs/masking.md).
struct KccaScoreOptions {
  /// The data selection (data::DataOptions): the spec and --data-* options, the window length
  /// (200 samples at 50 Hz), the generator's coupling, and the random 7:3 split (split_seed,
  /// upstream's 1004) that Algorithm-1 transitions are built from. The generator's size and seed
  /// are `samples` and a seed derived from `scoring.score.seed`.
  data::DataOptions data;
  /// Algorithm-1 synthetic transitions built from the labelled windows' 7:3 training split; 0 =
  /// score the data's own windows; -1 (default) = `samples` transitions for HAPT, 0 otherwise.
  int transitions = -1;
  /// Windows scored: the generator's count, and the cap on a data set's windows (a seeded random
  /// subset when it has more); >= 3.
  int samples = 1000;
  /// The scoring (--scheme, --ratio, --features, --estimator, --pca, ..., --cross-modal).
  /// `scoring.score.seed` also seeds the data (generator and transitions).
  masking::ScoreRunOptions scoring;
  std::string json;  ///< JSON output file; empty = none
  /// The program's effective options (tools::config_json: the keys of --print-config), recorded
  /// as the JSON's "options" by run_kcca_score; the run reports what ran as "settings".
  nlohmann::json recorded_options;
  bool progress = true;  ///< progress lines on stderr for runs over a second
  /// Throws std::invalid_argument naming the option, its value and the rule: scoring.validate(),
  /// the data-selection fields here, then data.validate() and data.dataset.validate().
  void validate() const;
};

/// Runs the scoring: prints the table to `out`, progress and the data source to `log`, writes
/// the JSON file if asked, and returns the JSON document (masking::to_json of the run, with the
/// data-selection settings "samples" and "coupling", the program's "options" and the wall time
/// of the whole run). Throws std::invalid_argument for bad options (exit 2) and
/// std::runtime_error for I/O or numerical failures (exit 1).
nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log);

}  // namespace moca::tools
