// data::select and data::split (selection.hpp): the windows the generator options ask for at the
// length and rate asked for, and each split kind equal to the split it names (splits.hpp);
// data::unused_options, the options the others leave without effect.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "moca/data/selection.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "test_util.hpp"

using moca::data::DataOptions;
using moca::data::SplitKind;

namespace {

DataOptions generator_options() {
  DataOptions o;
  o.data = "generator";
  o.synthetic_windows = 90;
  o.coupling = 0.4;
  o.synthetic_seed = 3;
  return o;
}

}  // namespace

TEST_CASE("select: the generator's size, coupling and seed at the length and rate asked for") {
  const DataOptions o = generator_options();
  const auto d = moca::data::select(o);
  moca::data::SyntheticOptions g;
  g.windows = 90;
  g.coupling = 0.4;
  g.seed = 3;
  const auto direct = moca::data::generate_synthetic(g);
  REQUIRE(d.windows.size() == 90);
  CHECK(d.windows.length == 200);  // window_length at 50 Hz
  CHECK(d.windows.x == direct.x);
  const auto longer = moca::data::select(o, 240, 50.0);
  CHECK(longer.windows.length == 240);
  DataOptions bad = o;
  bad.fold = 5;  // folds = 5
  CHECK_THROWS_AS(moca::data::select(bad), std::invalid_argument);
}

TEST_CASE("split: random, subject-kfold and all are the splits they name") {
  DataOptions o = generator_options();
  const auto w = moca::data::select(o).windows;
  o.split = SplitKind::kAll;
  auto [a_train, a_test] = moca::data::split(w, o);
  CHECK(a_train.x == w.x);
  CHECK(a_test.x == w.x);

  o.split = SplitKind::kRandom;
  o.train_fraction = 0.6;
  o.split_seed = 17;
  const auto r = moca::data::random_split(w.size(), 0.6, 17);
  auto [r_train, r_test] = moca::data::split(w, o);
  CHECK(r_train.x == w.subset(r.train).x);
  CHECK(r_test.x == w.subset(r.test).x);

  o.split = SplitKind::kSubjectKfold;
  o.folds = 3;
  o.fold = 2;
  const auto k = moca::data::subject_kfold(w.subjects, 3, 17);
  auto [k_train, k_test] = moca::data::split(w, o);
  CHECK(k_train.subjects == w.subset(k[2].train).subjects);
  CHECK(k_test.x == w.subset(k[2].test).x);

  moca::data::Windows anonymous = w;
  anonymous.subjects.setConstant(-1);
  CHECK_THROWS_WITH_AS(moca::data::split(anonymous, o), doctest::Contains("needs subject ids"),
                       std::invalid_argument);
}

TEST_CASE("SplitKind: names round-trip, others are refused naming the choices") {
  for (const auto& row : moca::data::kSplitKindNames)
    CHECK(moca::parse_enum(moca::data::kSplitKindNames, row.name, "split") == row.value);
  CHECK_THROWS_WITH_AS(moca::parse_enum(moca::data::kSplitKindNames, "kfold", "split"),
                       doctest::Contains("random, subject-kfold, all"), std::invalid_argument);
  CHECK(moca::data::default_data_spec(false) == "generator");
}

namespace {

// The fields unused_options lists, in order.
std::vector<std::string> unused_fields(const DataOptions& o, bool split_used) {
  std::vector<std::string> out;
  for (const auto& u : moca::data::unused_options(o, split_used)) out.push_back(u.field);
  return out;
}

}  // namespace

TEST_CASE("unused_options: the format's own options, the spec's keys and the split's rows") {
  using V = std::vector<std::string>;
  DataOptions o = generator_options();
  // the generator: the format of a bare folder, the .npy folder's and HAPT's options take no
  // effect; split rows only when asked
  const V generator = {"DatasetOptions::data_format",    "DatasetOptions::sample_rate",
                       "DatasetOptions::npy_layout",     "DatasetOptions::labels",
                       "DatasetOptions::hapt_windowing", "DatasetOptions::ts_unequal"};
  CHECK(unused_fields(o, false) == generator);
  V expected = generator;
  expected.insert(expected.end(), {"DataOptions::folds", "DataOptions::fold"});
  CHECK(unused_fields(o, true) == expected);
  o.split = SplitKind::kSubjectKfold;
  CHECK(unused_fields(o, true).back() == "DataOptions::train_fraction");
  o.split = SplitKind::kAll;
  expected = generator;
  expected.insert(expected.end(), {"DataOptions::train_fraction", "DataOptions::folds",
                                   "DataOptions::fold", "DataOptions::split_seed"});
  CHECK(unused_fields(o, true) == expected);
  // a spec key sets what its option would
  o = generator_options();
  o.data = "generator:coupling=0.5,seed=2";
  const auto u = moca::data::unused_options(o, false);
  REQUIRE(u.size() == 8);
  CHECK(u[1].why == "only npy and ts data uses it; the data is generator:coupling=0.5,seed=2");
  CHECK(u[4].field == "DatasetOptions::hapt_windowing");
  CHECK(u[4].why == "only hapt data uses it; the data is generator:coupling=0.5,seed=2");
  CHECK(u[6].field == "DataOptions::coupling");
  CHECK(u[6].why == "the data spec's coupling=0.5 sets it");
  CHECK(u[7].field == "DataOptions::synthetic_seed");
  // a bare .npy folder: the generator's options take no effect, --data-format names its format
  const std::string dir = moca::data::test::scratch_dir("unused_options");
  moca::data::export_dataset(moca::data::select(generator_options()).windows, dir);
  o = DataOptions{};
  o.data = dir;
  const V npy = {"DatasetOptions::hapt_windowing", "DatasetOptions::ts_unequal",
                 "DataOptions::synthetic_windows", "DataOptions::coupling",
                 "DataOptions::synthetic_seed"};
  CHECK(unused_fields(o, false) == npy);
  CHECK(moca::data::unused_options(o, false)[3].why ==
        "only generator data uses it; the data is npy:" + dir);
  o.data = "npy:" + dir;  // the spec names the format itself
  CHECK(unused_fields(o, false).front() == "DatasetOptions::data_format");
  o.data = dir;
  // a spec that cannot be resolved: nothing of a format (open_dataset says why)
  o.data = dir + "/missing";
  CHECK(unused_fields(o, false).empty());
}
