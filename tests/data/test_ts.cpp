// The UEA/UCR `.ts` reader (ts.hpp) on small files written in the format sktime and aeon read,
// quirks included (comments, blank lines, keys in any case, labels declared in another order by
// TEST), with the windows worked out by hand; the archive's split (Windows::parts) through
// subset, segmenting, resampling, the `predefined` split kind and a .npy export's split.npy.
#include <doctest/doctest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "moca/data/dataset.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/resample.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/ts.hpp"
#include "moca/data/windowing.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using moca::data::TsUnequal;
using moca::data::Windows;

namespace {

const char* const kTrain =
    "# BasicMotions-like: 2 dimensions, 4 samples\n"
    "@problemName Toy\n"
    "@timeStamps false\n"
    "@missing false\n"
    "@univariate false\n"
    "@dimensions 2\n"
    "@equalLength true\n"
    "@seriesLength 4\n"
    "@classLabel true walk run\n"
    "\n"
    "@data\n"
    "1,2,3,4:10,20,30,40:walk\n"
    "# a comment between cases\n"
    "-1.5,0,0.25,1e-3:5,6,7,8:run\n"
    "  9,8,7,6 : 1,1,1,1 : walk  \n";
// TEST declares the labels in the other order and spells the keys in other cases.
const char* const kTest =
    "@PROBLEMNAME Toy\n@Dimensions 2\n@SERIESLENGTH 4\n@classlabel TRUE run walk\n@DATA\n"
    "0,0,0,1:2,2,2,2:run\n"
    "4,3,2,1:0,1,0,1:walk\n";

std::string toy_pair(const std::string& name) {
  const std::string d = moca::data::test::scratch_dir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  moca::data::test::write_text(d + "/Toy_TRAIN.ts", kTrain);
  moca::data::test::write_text(d + "/Toy_TEST.ts", kTest);
  return d;
}

std::string one_file(const std::string& name, const std::string& body) {
  const std::string d = moca::data::test::scratch_dir(name);
  const std::string p = d + "/one.ts";
  moca::data::test::write_text(p, body);
  return p;
}

const char* const kHead2 = "@problemName U\n@dimensions 2\n@classLabel true a b\n";

}  // namespace

TEST_CASE("ts: a TRAIN/TEST pair is read case by case, with the archive's split") {
  const std::string d = toy_pair("ts_pair");
  std::vector<std::string> notes;
  const Windows w = moca::data::read_ts(d, TsUnequal::kError, false, &notes);
  REQUIRE(w.size() == 5);
  CHECK(w.channels == 2);
  CHECK(w.length == 4);
  CHECK(w.channel_names == std::vector<std::string>{"dim_0", "dim_1"});
  CHECK(w.class_names == std::vector<std::string>{"walk", "run"});  // TRAIN's order
  // walk run walk | run walk: TEST's labels mapped to TRAIN's ids
  CHECK(w.labels(0) == 0);
  CHECK(w.labels(1) == 1);
  CHECK(w.labels(2) == 0);
  CHECK(w.labels(3) == 1);
  CHECK(w.labels(4) == 0);
  for (int i = 0; i < 5; ++i) CHECK(w.subjects(i) == -1);
  REQUIRE(w.parts.size() == 5);
  CHECK(w.parts(0) == 0);
  CHECK(w.parts(2) == 0);
  CHECK(w.parts(3) == 1);
  CHECK(w.parts(4) == 1);
  // window (channel, sample): dimension-major
  CHECK(w.window(0)(0, 3) == 4.0f);
  CHECK(w.window(0)(1, 0) == 10.0f);
  CHECK(w.window(1)(0, 0) == -1.5f);
  CHECK(w.window(1)(0, 3) == 0.001f);
  CHECK(w.window(2)(0, 0) == 9.0f);
  CHECK(w.window(2)(1, 3) == 1.0f);
  CHECK(w.window(4)(1, 3) == 1.0f);
  CHECK(w.sample_rate_hz == 0.0);  // the format states none
  bool split_note = false;
  for (const auto& n : notes) split_note |= n.find("3 TRAIN and 2 TEST") != std::string::npos;
  CHECK(split_note);
}

TEST_CASE("ts: --data ts:DIR, DIR/NAME, a bare folder and a bare file; split predefined") {
  const std::string d = toy_pair("ts_spec");
  moca::data::DatasetOptions o;
  o.keep_rate_and_length = true;
  o.target_rate_hz = 10.0;
  for (const std::string& spec : {"ts:" + d, "ts:" + d + "/Toy", d}) {
    const moca::data::Dataset ds = moca::data::open_dataset(spec, o);
    CHECK(ds.spec.format == moca::data::DataFormat::kTs);
    CHECK(ds.windows.size() == 5);
    CHECK(ds.windows.parts.size() == 5);
    CHECK(ds.windows.sample_rate_hz == 10.0);  // kept as stored, labelled with the model's rate
  }
  const moca::data::Dataset one = moca::data::open_dataset(d + "/Toy_TEST.ts", o);
  CHECK(one.spec.format == moca::data::DataFormat::kTs);
  CHECK(one.windows.size() == 2);
  CHECK(one.windows.parts.size() == 0);  // one file: no split

  // The programs resample: the rate must be stated.
  moca::data::DatasetOptions cut;
  CHECK_THROWS_WITH_AS(moca::data::open_dataset("ts:" + d, cut),
                       doctest::Contains("sample rate unknown"), std::invalid_argument);
  cut.sample_rate_hz = 25.0;
  cut.length = 8;
  const moca::data::Dataset ds = moca::data::open_dataset("ts:" + d, cut);
  CHECK(ds.windows.length == 8);  // 4 samples at 25 Hz -> 8 at 50 Hz
  REQUIRE(ds.windows.parts.size() == 5);
  CHECK(ds.windows.parts(3) == 1);

  moca::data::DataOptions sel;
  sel.data = "ts:" + d;
  sel.split = moca::data::SplitKind::kPredefined;
  const auto [train, test] = moca::data::split(ds.windows, sel);
  CHECK(train.size() == 3);
  CHECK(test.size() == 2);
  CHECK(test.labels(0) == 1);
  CHECK(test.window(0)(0, 0) == ds.windows.window(3)(0, 0));
  // split_seed draws nothing under predefined: an unused option
  bool seed_unused = false;
  for (const auto& u : moca::data::unused_options(sel, true))
    seed_unused |= u.field == "DataOptions::split_seed";
  CHECK(seed_unused);
  // subject folds on data without subjects point at the data's own split
  sel.split = moca::data::SplitKind::kSubjectKfold;
  CHECK_THROWS_WITH_AS(moca::data::split(ds.windows, sel), doctest::Contains("split predefined"),
                       std::invalid_argument);
  // --sample-rate is a .ts option as well as a .npy one; --ts-unequal only a .ts one
  moca::data::DataOptions npy;
  npy.data = "generator";
  bool rate_unused = false, unequal_unused = false;
  for (const auto& u : moca::data::unused_options(npy, false)) {
    rate_unused |= u.field == "DatasetOptions::sample_rate";
    unequal_unused |= u.field == "DatasetOptions::ts_unequal";
  }
  CHECK(rate_unused);
  CHECK(unequal_unused);
  for (const auto& u : moca::data::unused_options(sel, false)) {
    CHECK(u.field != "DatasetOptions::sample_rate");
    CHECK(u.field != "DatasetOptions::ts_unequal");
  }
}

TEST_CASE("ts: the split follows subset, segments, resampling and a .npy export") {
  const std::string d = toy_pair("ts_carry");
  const Windows w = moca::data::read_ts(d, TsUnequal::kError, false);
  const Windows s = w.subset({4, 0});
  REQUIRE(s.parts.size() == 2);
  CHECK(s.parts(0) == 1);
  CHECK(s.parts(1) == 0);
  const Windows seg = moca::data::segment_windows(w, 2, 2);  // two sub-windows each
  REQUIRE(seg.parts.size() == 10);
  CHECK(seg.parts(5) == 0);
  CHECK(seg.parts(6) == 1);
  Windows rated = w;
  rated.sample_rate_hz = 25.0;
  CHECK(moca::data::resample_windows(rated, 50.0, 8).parts == w.parts);

  rated.description = "toy";
  const std::string out = moca::data::test::scratch_dir("ts_export") + "/npy";
  fs::remove_all(out);
  moca::data::export_dataset(rated, out);
  REQUIRE(fs::exists(out + "/split.npy"));
  const Windows back = moca::data::read_windows_npy(out);
  CHECK(back.parts == w.parts);
  // Without a split the file is removed, not left to be misread.
  Windows plain = rated;
  plain.parts.resize(0);
  moca::data::write_windows_npy(plain, out);
  CHECK_FALSE(fs::exists(out + "/split.npy"));
  CHECK(moca::data::read_windows_npy(out).parts.size() == 0);
  // A split.npy of other words is refused.
  moca::data::write_windows_npy(rated, out);
  moca::data::test::write_raw_npy(
      out + "/split.npy", "<U5", "(5,)",
      std::string("t\0\0\0r\0\0\0a\0\0\0i\0\0\0n\0\0\0", 20) + std::string(80, '\0'));
  CHECK_THROWS_WITH_AS(moca::data::read_windows_npy(out), doctest::Contains("'train' or 'test'"),
                       std::invalid_argument);
}

TEST_CASE("ts: the predefined split needs one; both parts hold windows") {
  Eigen::VectorXi none;
  CHECK_THROWS_WITH_AS(moca::data::predefined_split(none, "protocol predefined"),
                       doctest::Contains("states none"), std::invalid_argument);
  Eigen::VectorXi all_train = Eigen::VectorXi::Zero(3);
  CHECK_THROWS_WITH_AS(moca::data::predefined_split(all_train, "x"),
                       doctest::Contains("3 training and 0 test"), std::invalid_argument);
  Eigen::VectorXi p(4);
  p << 1, 0, 1, 0;
  const auto s = moca::data::predefined_split(p, "x");
  CHECK(s.train == std::vector<int>{1, 3});
  CHECK(s.test == std::vector<int>{0, 2});
}

TEST_CASE("ts: unequal lengths are refused, padded with the last sample, or truncated") {
  const std::string p = one_file("ts_unequal", std::string(kHead2) +
                                                   "@equalLength false\n@data\n"
                                                   "1,2,3:4,5,6:a\n"
                                                   "7,8:9,10:b\n"
                                                   "1,1,1,1:2,2,2,2:a\n");
  CHECK_THROWS_WITH_AS(moca::data::read_ts(p, TsUnequal::kError, false),
                       doctest::Contains(("2 (" + p + ":7) to 4 (" + p + ":8)").c_str()),
                       std::invalid_argument);
  const Windows pad = moca::data::read_ts(p, TsUnequal::kPad, false);
  CHECK(pad.length == 4);
  CHECK(pad.window(0)(0, 3) == 3.0f);
  CHECK(pad.window(1)(0, 2) == 8.0f);
  CHECK(pad.window(1)(1, 3) == 10.0f);
  const Windows cut = moca::data::read_ts(p, TsUnequal::kTruncate, false);
  CHECK(cut.length == 2);
  CHECK(cut.window(0)(1, 1) == 5.0f);
  CHECK(cut.window(2)(1, 0) == 2.0f);
}

TEST_CASE("ts: missing values") {
  const std::string body = std::string(kHead2) + "@data\n1,?,3:4,5,6:a\n";
  CHECK_THROWS_WITH_AS(moca::data::read_ts(one_file("ts_miss0", body), TsUnequal::kError, false),
                       doctest::Contains(":5: dimension 0 value 1 is missing"),
                       std::invalid_argument);
  const std::string p = one_file("ts_miss1", std::string(kHead2) +
                                                 "@missing true\n@data\n1,2,3:4,5,6:a\n"
                                                 "1,2,3:4,NaN,6:b\n");
  CHECK_THROWS_WITH_AS(moca::data::read_ts(p, TsUnequal::kError, false),
                       doctest::Contains(":7: dimension 1 value 1 is missing"),
                       std::invalid_argument);
  std::int64_t dropped = 0;
  const Windows w = moca::data::read_ts(p, TsUnequal::kError, true, nullptr, &dropped);
  CHECK(dropped == 1);
  CHECK(w.size() == 1);
  CHECK(w.labels(0) == 0);
}

TEST_CASE("ts: a header and data that disagree are refused, naming file and line") {
  const auto refused = [](const std::string& body, const std::string& what) {
    const std::string p = one_file("ts_bad", body);
    CHECK_THROWS_WITH_AS(moca::data::read_ts(p, TsUnequal::kError, false),
                         doctest::Contains(what.c_str()), std::invalid_argument);
  };
  refused(std::string(kHead2) + "@data\n1,2:3,4:a\n1,2:a\n",
          ":6: the case has 1 dimension and a label, the header's @dimensions 2");
  refused("@classLabel true a\n@data\n1,2:3,4:a\n1,2:a\n",
          ":4: the case has 1 dimension and a label, the first case's 2");
  refused(std::string(kHead2) + "@seriesLength 3\n@data\n1,2:3,4:a\n",
          "has 2 values per dimension; @seriesLength states 3");
  refused(std::string(kHead2) + "@data\n1,2,3:3,4,5:a\n1,2:3,4:b\n",
          "@equalLength true and the first case has 3");
  refused(std::string(kHead2) + "@data\n1,2:3,4,5:a\n", "dimension 1 has 3 values");
  refused(std::string(kHead2) + "@data\n1,2:3,4:c\n",
          "class label 'c' is not declared by @classLabel (a b)");
  refused("@timeStamps true\n@data\n(0,1),(1,2):a\n", "@timeStamps true");
  refused("@targetLabel true\n@data\n1,2:0.5\n", "regression");
  refused("@missing maybe\n@data\n", "@missing takes one value, true or false (found 'maybe')");
  refused("@dimensions 0\n@data\n", "@dimensions takes one whole number >= 1");
  refused("@classLabel true\n@data\n", "declares no labels");
  refused("@univariate true\n@data\n1,2:3,4\n", "the header's @univariate 1");
  refused(std::string(kHead2) + "1,2:3,4:a\n", ":4: a header line begins with '@'");
  refused(std::string(kHead2), "no @data line");
  refused(std::string(kHead2) + "@data\n", "no case after @data");
  refused(std::string(kHead2) + "@data\n1,x:3,4:a\n", "dimension 0 value 1 ('x')");

  // unknown keys are left out, with a note
  std::vector<std::string> notes;
  moca::data::read_ts(one_file("ts_key", std::string(kHead2) + "@author me\n@data\n1:2:a\n"),
                      TsUnequal::kError, false, &notes);
  REQUIRE_FALSE(notes.empty());
  CHECK(notes.front().find("@author") != std::string::npos);
}

TEST_CASE("ts: a pair whose files disagree, or a folder without one pair") {
  const std::string d = toy_pair("ts_pairbad");
  moca::data::test::write_text(d + "/Toy_TEST.ts",
                               "@dimensions 2\n@classLabel true walk jog\n@data\n1:2:jog\n");
  CHECK_THROWS_WITH_AS(moca::data::read_ts(d, TsUnequal::kError, false),
                       doctest::Contains("declare different class labels (walk run; walk jog)"),
                       std::invalid_argument);
  fs::remove(d + "/Toy_TEST.ts");
  CHECK_THROWS_WITH_AS(moca::data::read_ts(d, TsUnequal::kError, false),
                       doctest::Contains("Toy_TEST.ts is missing"), std::invalid_argument);
  moca::data::test::write_text(d + "/Other_TRAIN.ts", kTrain);
  CHECK_THROWS_WITH_AS(moca::data::read_ts(d, TsUnequal::kError, false),
                       doctest::Contains("2 problems (Other, Toy)"), std::invalid_argument);
}

TEST_CASE("ts: control: declaring the classes in another order permutes the ids, not the data") {
  const std::string a = one_file("ts_ctl_a", std::string(kTrain));
  const Windows w1 = moca::data::read_ts(a, TsUnequal::kError, false);
  std::string swapped = kTrain;
  swapped.replace(swapped.find("walk run"), 8, "run walk");
  const Windows w2 = moca::data::read_ts(one_file("ts_ctl_b", swapped), TsUnequal::kError, false);
  CHECK(w1.x == w2.x);
  for (int i = 0; i < w1.size(); ++i) {
    CHECK(w1.labels(i) == 1 - w2.labels(i));
    CHECK(w1.class_names[static_cast<size_t>(w1.labels(i))] ==
          w2.class_names[static_cast<size_t>(w2.labels(i))]);
  }
}
