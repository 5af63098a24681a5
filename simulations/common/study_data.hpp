#pragma once
/// \file study_data.hpp
/// Data and output helpers shared by the studies in simulations/: where the windows come from
/// (any moca::data::open_dataset source: HAPT, HMP, a .npy folder or the built-in generator),
/// described as JSON, and atomic JSON output.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "moca/data/dataset.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/windows.hpp"

namespace moca::sim {

/// Where a study's windows come from and how many it draws.
struct StudyDataOptions {
  /// The data selection (data::DataOptions): the spec (empty: $MOCA_HAPT_DIR when
  /// selection.dataset.use_env and it is set, else the generator), the --data-* options, the
  /// window length (200 samples at 50 Hz), the generator's coupling, and the random 7:3 split
  /// (split_seed, upstream's 1004) that transitions and held-out windows come from. The
  /// generator's size and seed are `samples` and `seed` (set by the functions below).
  data::DataOptions selection;
  int samples = 1000;      ///< windows of the set built (>= 3)
  std::uint64_t seed = 0;  ///< seed of the generator / of Algorithm 1 / of the subset drawn
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
  /// The spec actually used: selection.data, else hapt:$MOCA_HAPT_DIR (when use_env), else
  /// "generator".
  std::string resolved_spec() const;
};

/// A window set and how it was made.
struct StudyWindows {
  data::Windows windows;
  nlohmann::json description;  ///< source, sizes, seeds, channels
};

/// The paper's simulation data: with HAPT, `samples` synthetic transitions (Algorithm 1) drawn
/// from the training part of the random 7:3 split; with the generator, `samples` generated
/// windows at the given coupling; with any other source, its windows (a seeded random subset of
/// `samples` when it has more).
StudyWindows transition_windows(const StudyDataOptions& options);

/// A train / test pair: with a data set, the random 7:3 split (all windows, or the first `samples`
/// training rows and 3/7 of that many test rows when samples > 0 is smaller); with the generator,
/// `samples` training and ceil(3/7 samples) test windows from independent seeds.
struct StudySplit {
  data::Windows train, test;
  nlohmann::json description;
};
StudySplit train_test_windows(const StudyDataOptions& options);

/// Reads a JSON file; std::runtime_error naming it when it is missing or not JSON.
nlohmann::json read_json_file(const std::string& path);

/// Writes `j` (indented) to `path` through write_output_file. std::runtime_error on failure.
void write_json(const std::string& path, const nlohmann::json& j);

}  // namespace moca::sim
