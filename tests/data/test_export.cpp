// data::export_selection and data::window_recordings_to_folder (export.hpp): the windows written
// are the selection's (or the number of transitions asked for), the options a mode leaves without
// effect are listed, and the windowing's rules name their fields.
#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/data/export.hpp"
#include "test_util.hpp"

using moca::data::ExportOptions;

namespace {

ExportOptions generator_export(const std::string& dir) {
  ExportOptions o;
  o.data.data = "generator";
  o.data.synthetic_windows = 40;
  o.out_dir = dir;
  return o;
}

std::vector<std::string> fields(const std::vector<moca::UnusedOption>& unused) {
  std::vector<std::string> f;
  for (const auto& u : unused) f.push_back(u.field);
  return f;
}

}  // namespace

TEST_CASE("export_selection: every window, or N transitions from the training part") {
  const std::string dir = moca::data::test::scratch_dir("export") + "/a";
  ExportOptions o = generator_export(dir + "/b");  // a missing parent is refused before any work
  std::ostringstream log;
  const std::string refusal =
      "ExportOptions::out_dir (" + dir + "/b): folder " + dir + " does not exist";
  CHECK_THROWS_WITH_AS(moca::data::export_selection(o, log), refusal.c_str(),
                       std::invalid_argument);
  o.out_dir = dir;
  const auto r = moca::data::export_selection(o, log);  // the control: its parent exists
  const auto x = moca::read_npy(dir + "/X.npy");
  REQUIRE(x.shape.size() == 3);
  CHECK(x.shape[0] == 40);  // the generator's 40 windows, 6 channels of 200 samples
  CHECK(x.shape[1] == 6);
  CHECK(x.shape[2] == 200);
  CHECK(r.json["exported_windows"] == 40);
  CHECK(r.summary.find("40 windows of generator") != std::string::npos);
  o.transitions = 7;
  o.seed = 2;
  const auto t = moca::data::export_selection(o, log);
  CHECK(moca::read_npy(dir + "/X.npy").shape[0] == 7);
  CHECK(t.json["exported"] == "Algorithm-1 transitions (seed 2)");
}

TEST_CASE("export options: the split and the seed take effect only with transitions") {
  ExportOptions o = generator_export("unused");
  CHECK(fields(moca::data::unused_options(o)) ==
        std::vector<std::string>{"ShardOptions::float16", "DataOptions::split",
                                 "DataOptions::split_seed", "DataOptions::train_fraction",
                                 "DataOptions::folds", "DataOptions::fold", "ExportOptions::seed"});
  o.transitions = 3;
  CHECK(fields(moca::data::unused_options(o)) == std::vector<std::string>{"ShardOptions::float16"});
  o.shards.shard_mb = 1;  // the control: float16 takes effect in shards
  CHECK(moca::data::unused_options(o).empty());
  o.shards.shard_mb = 0;
  o.transitions = -1;
  CHECK_THROWS_WITH_AS(o.validate(), "ExportOptions::transitions (-1) must be >= 0",
                       std::invalid_argument);
  o.transitions = 0;
  o.out_dir.clear();
  CHECK_THROWS_WITH_AS(o.validate(), "ExportOptions::out_dir is required", std::invalid_argument);
}

TEST_CASE("recording windows: the rate is required, the rules name their fields") {
  moca::data::RecordingWindowOptions w;
  CHECK_THROWS_WITH_AS(w.validate(),
                       doctest::Contains("RecordingWindowOptions::sample_rate_hz is required"),
                       std::invalid_argument);
  w.sample_rate_hz = 10;
  w.validate();  // the control
  w.window_seconds = 0.1;
  CHECK_THROWS_WITH_AS(w.validate(),
                       "RecordingWindowOptions::window_seconds (0.1) is under two samples at 10 Hz",
                       std::invalid_argument);
  w.window_seconds = 2;
  w.stride_seconds = -1;
  CHECK_THROWS_WITH_AS(w.validate(), "RecordingWindowOptions::stride_seconds (-1) must be >= 0",
                       std::invalid_argument);
  w.stride_seconds = 0;
  CHECK(fields(moca::data::unused_options(w)) ==
        std::vector<std::string>{"RecordingWindowOptions::transition_seconds",
                                 "RecordingWindowOptions::unmapped"});
  w.rule = moca::data::LabelRule::kTransition;
  CHECK(fields(moca::data::unused_options(w)) ==
        std::vector<std::string>{"RecordingWindowOptions::unmapped"});  // no label map
  w.label_map = "dict.csv";
  CHECK(moca::data::unused_options(w).empty());
}
