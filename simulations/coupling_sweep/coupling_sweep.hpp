#pragma once
/// \file coupling_sweep.hpp
/// Coupling sweep: on the built-in generator (data::generate_synthetic), sweep the cross-modal
/// coupling dial c from 0 (independent accelerometer and gyroscope) to 1 (the gyroscope measures
/// the accelerometer's own motion) and score cross vs synchronised masking at each c, so one can
/// see where cross beats sync and where it does not — the paper's claim is that cross wins "when
/// within-time-slice correlations across modalities are strong".
///
/// At every c the windows come from the same seed (per-window streams), so the sweep changes the
/// coupling and nothing else; every scheme at a given c sees the same windows and mask streams
/// (paired comparison). Each feature map is scored on the full views ("all") and on the
/// cross-modal part alone ("acc->gyro").
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/masking/policy_score.hpp"

namespace moca::sim {

/// Options of run_coupling_sweep.
struct CouplingSweepOptions {
  /// Coupling values, each in [0, 1], at least 2 (default 0, 0.1, ..., 1).
  std::vector<double> couplings = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  int samples = 1000;  ///< windows per coupling; >= 3
  std::vector<std::string> schemes = {"cross",
                                      "sync"};  ///< policy specs; the first two are compared
  double ratio = 0.75;                          ///< ratio for specs without one; (0, 1)
  std::vector<std::string> features = {"raw", "patch-mean"};  ///< raw | patch-mean
  /// The scorer: estimator (cca | kcca), pca (50), draws R (10 here), seed of the masks,
  /// threads; checked by its own validate(). Each part sets the mask mode (per-window) and views.
  masking::ScoreOptions score = default_score();
  int patch_length = 20;        ///< divides 200
  bool cross_modal = true;      ///< also score acc->gyro
  std::uint64_t data_seed = 0;  ///< generator seed (same at every c)
  std::string json;             ///< output file; empty = none
  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
  /// The options a user sets (option_schema.hpp): coupling_sweep's flags, in their order. The
  /// scorer's rows (owner ScoreOptions: the library's messages name them so) carry this study's
  /// help and no range: score.validate() checks them by ScoreOptions::schema. The lists keep each
  /// given text whole (list_flags.hpp); --no-cross-modal is the program's own switch.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* C = "CouplingSweepOptions";
    constexpr const char* S = "ScoreOptions";
    const Range any = Range::any();
    v(o.couplings,
      Option{C, "couplings", "--couplings", "coupling values in [0, 1] (space-separated)", any,
             kEveryScope, nullptr, Surface::kBoth, false});
    v(o.samples, Option{C, "samples", "--samples", "windows per coupling", Range::at_least(3)});
    v(o.schemes,
      Option{C, "schemes", "--scheme", "comma-separated policy specs (first two compared)", any,
             kEveryScope, nullptr, Surface::kBoth, false});
    v(o.ratio, Option{C, "ratio", "--ratio", "mask ratio for specs without one",
                      Range::between(0, 1, true, true)});
    v(o.features, Option{C, "features", "--features", "comma-separated: raw, patch-mean", any,
                         kEveryScope, nullptr, Surface::kBoth, false});
    v(o.score.estimator, Option{S, "estimator", "--estimator", "cca | kcca"},
      masking::kEstimatorNames);
    v(o.score.pca, Option{S, "pca", "--pca", "principal components per view"});
    v(o.score.draws, Option{S, "draws", "--draws", "mask draws"});
    v(o.patch_length,
      Option{C, "patch_length", "--patch-length", "samples per patch", Range::at_least(1)});
    v(o.data_seed, Option{C, "data_seed", "--data-seed", "generator seed"});
    v(o.score.seed, Option{S, "seed", "--seed", "seed of the mask draws"});
    v(o.score.threads, Option{S, "threads", "--threads", "OpenMP threads (0 = default)"});
    v(o.json, Option{C, "json", "--json", "write results as JSON to this file"});
  }
  /// The sweep's scorer defaults: masking::ScoreOptions with 10 draws.
  static masking::ScoreOptions default_score() {
    masking::ScoreOptions s;
    s.draws = 10;
    return s;
  }
};

/// Runs the sweep, prints a table (one row per coupling, feature map and part: the schemes'
/// scores and the first-minus-second difference with its CI) and a verdict per series (the
/// couplings where the first scheme is significantly above, below, or not distinguishable
/// from the second), writes JSON when asked, returns the JSON.
nlohmann::json run_coupling_sweep(const CouplingSweepOptions& options, std::ostream& out,
                                  std::ostream& log);

}  // namespace moca::sim
