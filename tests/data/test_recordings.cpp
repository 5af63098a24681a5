// data::window_recordings and RecordingSource (recordings.hpp): files found in per-subject
// folders and by a glob, channels picked by name, groups, unit scales, the gap rules and label
// maps, each against answers worked out by hand; the streamed X.npy against the in-memory path.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/data/export.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/recordings.hpp"
#include "test_util.hpp"

using moca::data::RecordingWindowOptions;
using moca::data::window_recordings;
using moca::data::Windows;
namespace fs = std::filesystem;

namespace {

/// A fresh, empty scratch folder.
std::string rec_scratch(const std::string& name) {
  const std::string d = moca::data::test::scratch_dir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Rows `t = 0..n-1` of columns time,ax,ay,az,gx,gy,gz,activity_label with ax = t + base,
/// ay = 2t, az = 3t, gx = -t, gy = 10, gz = 100 + t; `cell(t, column)` may replace a value
/// (column 1..6 = ax..gz) and `label(t)` gives the label.
std::string imu_csv(int n, int base, const std::function<std::string(int)>& label,
                    const std::function<std::string(int, int, const std::string&)>& cell = {}) {
  std::ostringstream s;
  s << "time,ax,ay,az,gx,gy,gz,activity_label\n";
  for (int t = 0; t < n; ++t) {
    const double v[6] = {double(t + base), 2.0 * t, 3.0 * t, -double(t), 10.0, 100.0 + t};
    s << t * 0.1;
    for (int c = 0; c < 6; ++c) {
      std::ostringstream x;
      x << v[c];
      s << "," << (cell ? cell(t, c + 1, x.str()) : x.str());
    }
    s << "," << label(t) << "\n";
  }
  return s.str();
}

RecordingWindowOptions imu_options() {
  RecordingWindowOptions o;
  o.sample_rate_hz = 10;
  o.window_seconds = 1;  // L = 10
  o.label_column = "activity_label";
  return o;
}

const auto walk = [](int) { return std::string("walk"); };

float rec_at(const Windows& w, int i, int channel, int t) {
  return w.window(i)(channel, t);
}

}  // namespace

TEST_CASE("recordings: per-subject folders and globs, the subject from the path") {
  const std::string d = rec_scratch("rec_layout");
  fs::create_directories(d + "/S01");
  fs::create_directories(d + "/S02");
  moca::data::test::write_text(d + "/S01/imu.csv", imu_csv(20, 0, walk));
  moca::data::test::write_gz(d + "/S02/imu.csv.gz", imu_csv(25, 1000, walk));
  moca::data::test::write_text(d + "/S02/more.csv", imu_csv(10, 2000, walk));
  const auto files = moca::data::find_recordings(d);
  REQUIRE(files.size() == 3);
  CHECK(files[0].subject == "S01");
  CHECK(files[1].subject == "S02");
  CHECK(files[2].subject == "S02");
  const Windows w = window_recordings(d, imu_options());
  // 20 rows -> 2 windows; 25 -> 2 (remainder dropped); 10 -> 1, never across files
  REQUIRE(w.size() == 5);
  CHECK(w.subject_names == std::vector<std::string>{"S01", "S02"});
  CHECK(w.subjects(2) == 1);
  CHECK(w.subjects(4) == 1);
  CHECK(rec_at(w, 2, 0, 0) == doctest::Approx(1000));
  CHECK(rec_at(w, 4, 0, 0) == doctest::Approx(2000));
  // a glob: the subject is what its first wildcard component matches
  const auto g = moca::data::find_recordings(d + "/S*/imu.csv*");
  REQUIRE(g.size() == 2);
  CHECK(g[1].subject == "S02");
  const auto f = moca::data::find_recordings(d + "/S02/*.csv");
  REQUIRE(f.size() == 1);
  CHECK(f[0].subject == "more");  // the file name without its extension
  CHECK_THROWS_WITH_AS(moca::data::find_recordings(d + "/P*/*.csv"),
                       doctest::Contains("is a glob that matches no file"), std::invalid_argument);
}

TEST_CASE("recordings: channels by name in any column order, groups, and scales") {
  const std::string d = rec_scratch("rec_channels");
  moca::data::test::write_text(d + "/a.csv", imu_csv(10, 0, walk));
  // b.csv: the same columns in another order
  std::ostringstream b;
  b << "activity_label,gz,gy,gx,az,ay,ax,time\n";
  for (int t = 0; t < 10; ++t) {
    b << "walk," << 100 + t << ",10," << -t << "," << 3 * t << "," << 2 * t << "," << t + 50 << ","
      << t * 0.1 << "\n";
  }
  moca::data::test::write_text(d + "/b.csv", b.str());
  RecordingWindowOptions o = imu_options();
  // without --channels the columns must agree
  CHECK_THROWS_WITH_AS(window_recordings(d, o), doctest::Contains("differ from"),
                       std::invalid_argument);
  o.channels = {"gx", "ax", "az"};
  o.modalities = "acc=ax,az;gyro=gx";
  o.scale = "acc=0.5";
  moca::data::RecordingStats st;
  const Windows w = window_recordings(d, o, &st);
  REQUIRE(w.size() == 2);
  CHECK(w.channel_names == std::vector<std::string>{"ax", "az", "gx"});  // group order
  REQUIRE(w.modalities.size() == 2);
  CHECK(w.modalities[0].channels == std::vector<int>{0, 1});
  CHECK(w.modalities[1].channels == std::vector<int>{2});
  for (int t = 0; t < 10; ++t) {
    CHECK(rec_at(w, 0, 0, t) == 0.5f * float(t));  // ax, halved
    CHECK(rec_at(w, 0, 1, t) == 1.5f * float(t));  // az = 3t, halved
    CHECK(rec_at(w, 0, 2, t) == -float(t));        // gx, not scaled
    CHECK(rec_at(w, 1, 0, t) == 0.5f * float(t + 50));
    CHECK(rec_at(w, 1, 2, t) == -float(t));
  }
  CHECK(st.files == 2);
  CHECK(st.rows == 20);
  // bad input: each one clear, before any data is read
  o.channels = {"ax", "mx"};
  o.modalities.clear();
  o.scale.clear();
  CHECK_THROWS_WITH_AS(window_recordings(d, o),
                       doctest::Contains("RecordingWindowOptions::channels (mx): no such column"),
                       std::invalid_argument);
  o.channels = {"ax", "ay", "gx"};
  o.modalities = "acc=ax,ay;gyro=ay,gx";
  CHECK_THROWS_AS(window_recordings(d, o), std::invalid_argument);  // ay in two groups
  o.modalities = "acc=ax,ay;mag=mx";
  CHECK_THROWS_AS(window_recordings(d, o), std::invalid_argument);  // no channel mx
  o.modalities = "acc=ax,ay;gyro=gx";
  o.scale = "mag=2";
  CHECK_THROWS_WITH_AS(window_recordings(d, o), doctest::Contains("names no group 'mag'"),
                       std::invalid_argument);
  o.scale = "acc=0";
  CHECK_THROWS_WITH_AS(window_recordings(d, o), doctest::Contains("finite, non-zero FACTOR"),
                       std::invalid_argument);
}

TEST_CASE("recordings: gaps refused, dropped or interpolated, and always counted") {
  const std::string d = rec_scratch("rec_gaps");
  // 40 rows of walk, ax = t; rows 12 and 13 miss ax (one gap of 0.2 s), row 30 has ay 'NaN'
  moca::data::test::write_text(d + "/s.csv",
                               imu_csv(40, 0, walk, [](int t, int c, const std::string& v) {
                                 if (c == 1 && (t == 12 || t == 13))
                                   return std::string(t == 12 ? "" : "NA");
                                 if (c == 2 && t == 30) return std::string("NaN");
                                 return v;
                               }));
  RecordingWindowOptions o = imu_options();
  CHECK_THROWS_WITH_AS(
      window_recordings(d, o),
      doctest::Contains("s.csv:14: column 'ax' holds '', a missing value: the first of 2 gaps (3 "
                        "rows) in this file"),
      std::invalid_argument);
  o.missing = "drop";  // stretches 0-11, 14-29, 31-39: 1 + 1 + 0 windows
  moca::data::RecordingStats st;
  Windows w = window_recordings(d, o, &st);
  REQUIRE(w.size() == 2);
  CHECK(rec_at(w, 0, 0, 0) == 0.0f);
  CHECK(rec_at(w, 1, 0, 0) == 14.0f);  // starts after the gap, never across it
  CHECK(st.gaps == 2);
  CHECK(st.gap_rows == 3);
  CHECK(st.interpolated_gaps == 0);
  o.missing = "interpolate:0.2";  // both gaps filled: 4 windows, ax 12 and 13 on the line
  w = window_recordings(d, o, &st);
  REQUIRE(w.size() == 4);
  for (int t = 0; t < 10; ++t) CHECK(rec_at(w, 1, 0, t) == doctest::Approx(10 + t).epsilon(1e-6));
  CHECK(rec_at(w, 3, 1, 0) == doctest::Approx(60).epsilon(1e-6));  // ay at row 30 = 2 * 30
  CHECK(st.interpolated_gaps == 2);
  CHECK(st.interpolated_rows == 3);
  o.missing = "interpolate:0.1";  // the 2-row gap is longer than 0.1 s: dropped
  w = window_recordings(d, o, &st);
  CHECK(w.size() == 3);  // 0-9, then 14-23 and 24-33 (row 30 filled)
  CHECK(st.interpolated_gaps == 1);
  CHECK(st.gaps - st.interpolated_gaps == 1);
  // a gap at the start of a file has no value before it: dropped
  moca::data::test::write_text(d + "/s.csv",
                               imu_csv(21, 0, walk, [](int t, int c, const std::string& v) {
                                 return c == 3 && t == 0 ? std::string("null") : v;
                               }));
  w = window_recordings(d, o, &st);
  CHECK(w.size() == 2);
  CHECK(rec_at(w, 0, 0, 0) == 1.0f);
  CHECK(st.interpolated_gaps == 0);
  // a rule out of range; a cell that is no number under any rule
  o.missing = "interpolate:0";
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("RecordingWindowOptions::missing"),
                       std::invalid_argument);
  o.missing = "fill";
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  moca::data::test::write_text(d + "/s.csv",
                               imu_csv(21, 0, walk, [](int t, int c, const std::string& v) {
                                 return c == 3 && t == 5 ? std::string("abc") : v;
                               }));
  o.missing = "drop";
  CHECK_THROWS_WITH_AS(window_recordings(d, o),
                       doctest::Contains("column 'az' holds 'abc', not a number"),
                       std::invalid_argument);
}

TEST_CASE("recordings: the control: gap-free data is the same under every gap rule") {
  const std::string d = rec_scratch("rec_gapfree");
  moca::data::test::write_text(d + "/s.csv", imu_csv(37, 0, walk));
  RecordingWindowOptions o = imu_options();
  o.stride_seconds = 0.3;
  const Windows a = window_recordings(d, o);
  o.missing = "drop";
  const Windows b = window_recordings(d, o);
  o.missing = "interpolate:5";
  const Windows c = window_recordings(d, o);
  REQUIRE(a.size() == 10);  // starts 0, 3, ..., 27
  CHECK(a.x == b.x);
  CHECK(a.x == c.x);
  CHECK(rec_at(a, 9, 0, 0) == 27.0f);
}

TEST_CASE("recordings: a label map by column, quoted labels, unmapped labels by rule") {
  const std::string d = rec_scratch("rec_map");
  const std::string map = d + "/dict.csv";
  moca::data::test::write_text(map,
                               "annotation,label:Walmsley2020,label:Willetts2018\n"
                               "7030 sleeping;MET 0.95,sleep,sleep\n"
                               "\"walking, brisk;MET 3.5\",light,walking\n"
                               "sitting;MET 1.5,sedentary,sitting\n");
  fs::create_directories(d + "/rec");
  const auto label = [](int t) {
    return t < 10   ? std::string("7030 sleeping;MET 0.95")
           : t < 20 ? std::string("\"walking, brisk;MET 3.5\"")
                    : std::string("sitting;MET 1.5");
  };
  moca::data::test::write_text(d + "/rec/p1.csv", imu_csv(30, 0, label));
  RecordingWindowOptions o = imu_options();
  o.label_map = map + ":Walmsley2020";
  Windows w = window_recordings(d + "/rec", o);
  REQUIRE(w.size() == 3);
  CHECK(w.class_names == std::vector<std::string>{"light", "sedentary", "sleep"});
  CHECK(w.labels(0) == 2);
  CHECK(w.labels(1) == 0);
  CHECK(w.labels(2) == 1);
  o.label_map = map + ":label:Willetts2018";
  const Windows v = window_recordings(d + "/rec", o);
  CHECK(v.class_names == std::vector<std::string>{"sitting", "sleep", "walking"});
  CHECK(v.x == w.x);  // the control: a map changes labels, never samples
  // a label the map lacks: refused with its count, or its samples unlabelled
  moca::data::test::write_text(d + "/rec/p2.csv", imu_csv(25, 0, [](int t) {
                                 return t < 12 ? std::string("cycling;MET 7") : "sitting;MET 1.5";
                               }));
  CHECK_THROWS_WITH_AS(window_recordings(d + "/rec", o),
                       doctest::Contains("12 rows of this file carry 1 unmapped labels"),
                       std::invalid_argument);
  o.unmapped = moca::data::UnmappedRule::kDrop;
  moca::data::RecordingStats st;
  w = window_recordings(d + "/rec", o, &st);
  CHECK(w.size() == 3 + 1);  // p2: rows 12-24 of sitting
  CHECK(rec_at(w, 3, 0, 0) == 12.0f);
  CHECK(st.unmapped_rows == 12);
  CHECK(st.unmapped_labels == std::vector<std::string>{"cycling;MET 7"});
  // the map's own errors
  o.label_map = map;  // three columns: which one?
  CHECK_THROWS_WITH_AS(window_recordings(d + "/rec", o),
                       doctest::Contains("name the mapped one as FILE:COLUMN"),
                       std::invalid_argument);
  o.label_map = map + ":Doherty2018";
  CHECK_THROWS_WITH_AS(window_recordings(d + "/rec", o),
                       doctest::Contains("no column 'Doherty2018'"), std::invalid_argument);
  o.label_map = d + "/none.csv";
  CHECK_THROWS_WITH_AS(window_recordings(d + "/rec", o), doctest::Contains("no such file"),
                       std::invalid_argument);
}

TEST_CASE("recordings: the streamed folder equals the in-memory windows, nothing left on error") {
  const std::string d = rec_scratch("rec_stream");
  fs::create_directories(d + "/rec");
  moca::data::test::write_text(
      d + "/rec/a.csv", imu_csv(47, 0, [](int t) { return t < 25 ? std::string("walk") : "sit"; }));
  moca::data::test::write_gz(d + "/rec/b.csv.gz", imu_csv(33, 500, walk));
  moca::data::WindowExportOptions e;
  e.from = d + "/rec";
  e.windowing = imu_options();
  e.windowing.stride_seconds = 0.5;
  e.out_dir = d + "/out";
  const auto r = moca::data::window_recordings_to_folder(e);
  const Windows mem = window_recordings(e.from, e.windowing);
  std::vector<std::string> warnings;
  const Windows back = moca::data::read_windows_npy(e.out_dir, {}, nullptr, &warnings);
  CHECK(warnings.empty());  // meta.json's "recordings" is a known key
  REQUIRE(back.size() == mem.size());
  CHECK(back.x == mem.x);
  CHECK(back.labels == mem.labels);
  CHECK(back.subjects == mem.subjects);
  CHECK(back.class_names == mem.class_names);
  CHECK(r.json.at("recordings").at("stats").at("rows") == 80);
  // a bad cell half-way: the exception as it was, and no folder left behind
  moca::data::test::write_text(d + "/rec/c.csv",
                               imu_csv(30, 0, walk, [](int t, int c, const std::string& v) {
                                 return t == 20 && c == 2 ? std::string("x") : v;
                               }));
  e.out_dir = d + "/out2";
  CHECK_THROWS_WITH_AS(moca::data::window_recordings_to_folder(e),
                       doctest::Contains("c.csv:22: column 'ay' holds 'x', not a number"),
                       std::invalid_argument);
  CHECK(!fs::exists(e.out_dir));
}

TEST_CASE("write_npy_rows: the header states the rows written; a failing producer leaves nothing") {
  const std::string d = rec_scratch("npy_rows");
  const float rows[3][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  const auto n = moca::write_npy_rows(d + "/r.npy", {2, 2}, [&](const auto& put) {
    for (const auto& row : rows) put(row);
  });
  CHECK(n == 3);
  const moca::NdArray a = moca::read_npy(d + "/r.npy");
  CHECK(a.shape == std::vector<std::int64_t>{3, 2, 2});
  REQUIRE(a.data.size() == 12);
  for (int i = 0; i < 12; ++i) CHECK(a.data[static_cast<size_t>(i)] == double(i));
  CHECK_THROWS_AS(moca::write_npy_rows(d + "/s.npy", {4},
                                       [&](const auto& put) {
                                         put(rows[0]);
                                         throw std::domain_error("stop");
                                       }),
                  std::domain_error);
  CHECK(!fs::exists(d + "/s.npy"));
}
