#pragma once
/// \file score_data.hpp
/// `kcca_score` as one library call: open a data source, pick the windows scored (Algorithm-1
/// synthetic transitions of its training split, or its windows, a seeded subset when there are
/// more than `samples`), score every policy on them (score_windows) and describe the run as a
/// results document. The program parses flags into DataScoreOptions, calls score_data() and
/// prints the tables.
#include <nlohmann/json.hpp>
#include <ostream>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/masking/score_run.hpp"

namespace moca::masking {

/// What score_data() scores and how.
struct DataScoreOptions {
  /// The data selection: the spec and --data-* options, the window length (200 samples at
  /// 50 Hz), the generator's coupling, and the random 7:3 split (split_seed, upstream's 1004)
  /// that Algorithm-1 transitions are built from. The generator's size and seed are `samples`
  /// and a seed derived from `scoring.score.seed`.
  data::DataOptions data;
  /// Algorithm-1 synthetic transitions built from the labelled windows' 7:3 training split; 0 =
  /// score the data's own windows; -1 (default) = `samples` transitions for a format whose row
  /// says so (HAPT), 0 otherwise.
  int transitions = -1;
  /// Windows scored: the generator's count, and the cap on a data set's windows (a seeded random
  /// subset when it has more); >= 3.
  int samples = 1000;
  /// The scoring (schemes, ratio, features, estimator, pca, ..., cross_modal).
  /// `scoring.score.seed` also seeds the data (generator and transitions).
  ScoreRunOptions scoring;
  bool progress = true;  ///< progress lines on the log for runs over a second
  /// Throws std::invalid_argument naming the field (`DataScoreOptions::samples`), its value and
  /// the rule: scoring.validate(), the rows below, the patch length against the window length
  /// (a stream's own length is checked once read), then data.validate().
  void validate() const;

  /// The rows of this struct alone (the program adds ScoreRunOptions' and DataOptions' rows).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* S = "DataScoreOptions";
    v(o.transitions,
      Option{S, "transitions", "--transitions",
             "score N Algorithm-1 synthetic transitions built from the labelled windows (0 = the "
             "windows themselves; default: --samples for HAPT, 0 otherwise)",
             Range::any(), kEveryScope, "-1 (the format's default) or >= 0"});
    v(o.samples, Option{S, "samples", "--samples",
                        "windows scored: the generator's count, and the cap on a data set's "
                        "windows",
                        Range::at_least(3)});
  }
};

/// What score_data() found: the run and its results document (to_json(run) with the
/// data-selection settings "samples" and "coupling" and the whole run's seconds; the caller adds
/// its "options").
struct DataScore {
  ScoreRun run;
  nlohmann::json json;
};

/// Validates, opens the data (the source and the windows scored described on `log`), scores.
/// std::invalid_argument for bad options or data, std::runtime_error for I/O or numerical
/// failures.
DataScore score_data(const DataScoreOptions& options, std::ostream& log);

}  // namespace moca::masking
