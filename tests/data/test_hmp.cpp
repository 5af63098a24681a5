#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "moca/data/dataset.hpp"
#include "moca/data/hmp.hpp"
#include "moca/data/windowing.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

namespace {
std::string fixture_hmp() {
  return moca::data::test::fixture_dir() + "/hmp";
}
}  // namespace

TEST_CASE("hmp: file names give activity and volunteer") {
  std::string a, v;
  CHECK(parse_hmp_file_name("Accelerometer-2011-03-24-10-24-39-climb_stairs-f1.txt", a, v));
  CHECK(a == "climb_stairs");
  CHECK(v == "f1");
  CHECK(parse_hmp_file_name("Accelerometer-2011-05-30-08-29-07-walk-m10_1.txt.gz", a, v));
  CHECK(a == "walk");
  CHECK(v == "m10");
  CHECK_FALSE(parse_hmp_file_name("Accelerometer-2011-03-24-walk-f1.txt", a, v));
  CHECK_FALSE(parse_hmp_file_name("Gyro-2011-03-24-10-24-39-walk-f1.txt", a, v));
  CHECK_FALSE(parse_hmp_file_name("Accelerometer-2011-03-24-10-24-39-walk-f1.csv", a, v));
  CHECK_FALSE(parse_hmp_file_name("Accelerometer-2011-03-24-10-xx-39-walk-f1.txt", a, v));
  CHECK_FALSE(parse_hmp_file_name("README.txt", a, v));
}

TEST_CASE("hmp: units and 32 -> 50 Hz linear resampling are exact on a ramp") {
  const HmpRecording r = read_hmp_file(
      fixture_hmp() + "/HMP_Dataset/Walk/Accelerometer-2011-03-24-09-51-07-walk-f1.txt");
  CHECK(r.activity == "walk");
  CHECK(r.volunteer == "f1");
  REQUIRE(r.signal.rows() == 3);
  REQUIRE(r.signal.cols() == 99);  // floor(63 * 50 / 32) + 1
  for (int j = 0; j < 99; ++j) {
    const double p = j * 32.0 / 50.0;  // source row position of output sample j
    CHECK(std::abs(r.signal(0, j) - (p / 63.0 * 3.0 - 1.5)) < 1e-5);
    CHECK(std::abs(r.signal(1, j) - ((63.0 - p) / 63.0 * 3.0 - 1.5)) < 1e-5);
    CHECK(std::abs(r.signal(2, j) - (32.0 / 63.0 * 3.0 - 1.5)) < 1e-6);
  }
  CHECK(std::abs(r.signal(0, 0) + 1.5f) < 1e-6f);  // raw 0 -> -1.5 g
  CHECK(hmp_raw_to_g(63) == 1.5);
  CHECK(std::abs(hmp_raw_to_g(21) + 0.5) < 1e-12);
}

TEST_CASE("hmp: resample_linear on hand-computed values") {
  RowMatrixXf x(1, 3);
  x << 0.0f, 10.0f, 40.0f;
  const RowMatrixXf up = resample_linear(x, 2.0, 4.0);  // halves: 0, 5, 10, 25, 40
  REQUIRE(up.cols() == 5);
  const float expect[5] = {0, 5, 10, 25, 40};
  for (int j = 0; j < 5; ++j) CHECK(std::abs(up(0, j) - expect[j]) < 1e-6f);
  const RowMatrixXf down = resample_linear(x, 4.0, 2.0);  // every other: 0, 40
  REQUIRE(down.cols() == 2);
  CHECK(down(0, 1) == 40.0f);
  const RowMatrixXf same = resample_linear(x, 32.0, 32.0);
  CHECK(same == x);
  CHECK(resample_linear(RowMatrixXf::Ones(2, 1), 32, 50).cols() == 1);
  CHECK_THROWS_AS(resample_linear(RowMatrixXf(1, 0), 32, 50), std::invalid_argument);
  CHECK_THROWS_AS(resample_linear(x, 0, 50), std::invalid_argument);
}

TEST_CASE("hmp: fixture windows, labels and subjects") {
  HmpOptions o;
  o.length = 25;
  const Windows w = load_hmp_windows(fixture_hmp(), o);
  // walk-f1: 99 samples -> 3 windows; walk-m1: 15 -> none; climb_stairs-m1: 61 -> 2.
  REQUIRE(w.size() == 5);
  CHECK(w.channels == 3);
  CHECK(w.length == 25);
  CHECK(w.sample_rate_hz == 50.0);
  CHECK(w.channel_names == std::vector<std::string>{"acc_x", "acc_y", "acc_z"});
  CHECK(w.class_names == std::vector<std::string>{"climb_stairs", "walk"});
  CHECK(w.subject_names == std::vector<std::string>{"f1", "m1"});
  CHECK(w.labels == (Eigen::VectorXi(5) << 0, 0, 1, 1, 1).finished());
  CHECK(w.subjects == (Eigen::VectorXi(5) << 1, 1, 0, 0, 0).finished());
  CHECK(std::abs(w.window(0)(0, 7) + 0.5f) < 1e-6f);
  CHECK(std::abs(w.window(0)(2, 24) - 1.5f) < 1e-6f);
  // Window 3 (second walk window) starts at output sample 25: position 16 rows.
  CHECK(std::abs(w.window(3)(0, 0) - (16.0f / 63.0f * 3.0f - 1.5f)) < 1e-5f);
  CHECK(contains(w.description, "1 files shorter than one window"));
  w.validate("hmp");
  o.stride = 10;  // 99 -> 8 windows, 61 -> 4
  CHECK(load_hmp_windows(fixture_hmp(), o).size() == 12);
  o.stride = 0;
  o.include_model_folders = true;  // + walk-f1_1 (61 samples) -> 2 windows of volunteer f1
  const Windows m = load_hmp_windows(fixture_hmp() + "/HMP_Dataset", o);
  CHECK(m.size() == 7);
  CHECK(m.subject_names == std::vector<std::string>{"f1", "m1"});
}

TEST_CASE("hmp: bad inputs") {
  HmpOptions o;
  o.length = 0;
  CHECK(contains(error_text<std::invalid_argument>([&] { o.validate(); }), "length (0)"));
  o = {};
  o.stride = -2;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = {};
  o.target_rate_hz = 0;
  CHECK(contains(error_text<std::invalid_argument>([&] { o.validate(); }), "target_rate_hz"));
  const std::string d = moca::data::test::scratch_dir("hmp_bad");
  const std::string f = d + "/Accelerometer-2011-03-24-10-24-39-walk-f1.txt";
  auto bad = [&](const std::string& body, const std::string& where, const std::string& expect) {
    moca::data::test::write_text(f, body);
    const std::string msg = error_text<std::invalid_argument>([&] { read_hmp_file(f); });
    CHECK_MESSAGE(contains(msg, f + where), msg);
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  bad("1 2 3\r\n4 5\r\n", ":2:", "row has 2 fields");
  bad("1 2 3\r\n4 5 64\r\n", ":2:", "(64) is outside the coded range 0..63");
  bad("1 2 3\r\n4 -1 6\r\n", ":2:", "(-1) is outside");
  bad("1 2 3\r\n4 5.5 6\r\n", ":2:", "field 2 is not an integer");
  bad("1 2 3\r\n\r\n4 5 6\r\n", ":2:", "blank line inside the data");
  bad("", "", "no data rows");
  moca::data::test::write_text(d + "/oddname.txt", "1 2 3\n");
  CHECK(contains(error_text<std::invalid_argument>([&] { read_hmp_file(d + "/oddname.txt"); }),
                 "file name does not match"));
  CHECK_THROWS_AS(load_hmp_windows("/nonexistent/hmp"), std::runtime_error);
  CHECK(contains(error_text<std::runtime_error>([&] { load_hmp_windows(d); }), "no Accelerometer"));
}

TEST_CASE("hmp: real data (MOCA_HMP_DIR), 5 s windows at 50 Hz") {
  const std::string dir = moca::data::test::env_dir("MOCA_HMP_DIR");
  if (dir.empty()) {
    MESSAGE("MOCA_HMP_DIR unset or missing: real-data HMP test skipped");
    return;
  }
  const Windows w = load_hmp_windows(dir);
  MESSAGE("real HMP windows (L=250 at 50 Hz):\n" << class_count_table(w));
  // Known answers from an independent Python count over the 839 trial files:
  // M = (T - 1) * 50 // 32 + 1 samples per file, (M - 250) // 250 + 1 windows when M >= 250.
  CHECK(w.size() == 2379);
  CHECK(w.class_names.size() == 14);
  CHECK(w.subject_names.size() == 16);
  CHECK(contains(w.description, "839 files"));
  CHECK(contains(w.description, "30 files shorter than one window"));
  const std::vector<long> expect = {179, 195, 133, 76,  215, 193, 40,
                                    237, 55,  213, 105, 121, 89,  528};
  CHECK(class_counts(w) == expect);
  CHECK(w.class_names.front() == "brush_teeth");
  CHECK(w.class_names.back() == "walk");
  w.validate("hmp real");
}

TEST_CASE("hmp: the paper's ADL transfer selection") {
  const char* env = std::getenv("MOCA_HMP_DIR");
  const std::string saved = env != nullptr ? env : "";
  ::unsetenv("MOCA_HMP_DIR");
  AdlTransferData d = adl_transfer_data("/some/HMP", true);
  CHECK(d.spec == "hmp:/some/HMP");
  CHECK(d.keep_classes == "climb_stairs,drink_glass,getup_bed,pour_water,walk");
  CHECK(adl_transfer_data("/some/HMP", true, "walk").keep_classes == "walk");  // own selection
  CHECK(adl_transfer_data("/some/HMP", false).keep_classes.empty());           // all 14
  CHECK(contains(error_text<std::invalid_argument>([] { adl_transfer_data("", true); }),
                 "ClassifyOptions::hmp DIR or $MOCA_HMP_DIR"));
  ::setenv("MOCA_HMP_DIR", "/env/HMP", 1);
  CHECK(adl_transfer_data("", true).spec == "hmp:/env/HMP");
  CHECK(adl_transfer_data("/flag/HMP", true).spec == "hmp:/flag/HMP");  // the flag wins
  if (saved.empty()) {
    ::unsetenv("MOCA_HMP_DIR");
  } else {
    ::setenv("MOCA_HMP_DIR", saved.c_str(), 1);
  }
  const std::string dir = moca::data::test::env_dir("MOCA_HMP_DIR");
  if (dir.empty()) {
    MESSAGE("MOCA_HMP_DIR unset or missing: real-data paper-class selection skipped");
    return;
  }
  // On the real data the five activities come back relabelled 0..4 in the paper's order.
  d = adl_transfer_data("", true);
  DatasetOptions o;
  o.length = 250;
  o.keep_classes = d.keep_classes;
  const Dataset ds = open_dataset(d.spec, o);
  CHECK(ds.windows.class_names ==
        std::vector<std::string>{"climb_stairs", "drink_glass", "getup_bed", "pour_water", "walk"});
  const auto counts = class_counts(ds.windows);
  REQUIRE(counts.size() == 5);
  for (long c : counts) CHECK(c > 0);
}
