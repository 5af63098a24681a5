// data::load_pamap2_windows (pamap2.hpp) on small files in PAMAP2's documented layout (54
// blank-separated columns, NaN heart rate, dropped packets as NaN, transient activity 0, the
// Optional folder, subject 109), with the windows worked out by hand from ssl-wearables' rules.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moca/data/dataset.hpp"
#include "moca/data/raw_sets.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using moca::data::Windows;

namespace {

constexpr double kG = 9.80665;

/// A PAMAP2 file of `rows` lines: activity `label(r)`, hand ±16 g acceleration x = r / 1000 g,
/// y = -0.5 g, z = 5 g (clipped to 3), NaN heart rate except every 11th row, NaN hand x on the
/// rows `nan_row(r)` says; every other sensor column a constant.
std::string pamap2_dat(int rows, const std::function<int(int)>& label,
                       const std::function<bool(int)>& nan_row = {}) {
  std::ostringstream s;
  s.precision(10);
  for (int r = 0; r < rows; ++r) {
    s << 5.0 + r * 0.01 << " " << label(r) << " " << (r % 11 == 0 ? "104" : "NaN");
    for (int imu = 0; imu < 3; ++imu) {
      s << " 31.5";  // temperature
      if (imu == 0) {
        s << " " << (nan_row && nan_row(r) ? std::string("NaN") : std::to_string(kG * r / 1000.0))
          << " " << -0.5 * kG << " " << 5 * kG;
      } else {
        s << " 1.0 2.0 3.0";
      }
      s << " 0.1 0.2 0.3 0.01 0.02 0.03 40 41 42 1 0 0 0";
    }
    s << "\n";
  }
  return s.str();
}

std::string pamap2_tree(const std::string& name) {
  const std::string d = moca::data::test::scratch_dir(name);
  fs::remove_all(d);
  fs::create_directories(d + "/PAMAP2_Dataset/Protocol");
  fs::create_directories(d + "/PAMAP2_Dataset/Optional");
  return d;
}

/// 0-799 transient, 800-2299 walking (4), 2300-3599 ironing (17); rows 1000-1001 NaN.
int subject101_label(int r, int walking, int ironing) {
  return r < 800 ? 0 : (r < 2300 ? walking : ironing);
}

}  // namespace

TEST_CASE("pamap2: ssl-wearables' windows of the download, worked out by hand") {
  const std::string d = pamap2_tree("pamap2");
  const std::string p = d + "/PAMAP2_Dataset";
  const auto nan2 = [](int r) { return r == 1000 || r == 1001; };
  moca::data::test::write_text(p + "/Protocol/subject101.dat",
                               pamap2_dat(
                                   3600, [](int r) { return subject101_label(r, 4, 17); }, nan2));
  // a 500/500 tie between sitting (2) and standing (3): the smaller id
  moca::data::test::write_text(p + "/Protocol/subject102.dat",
                               pamap2_dat(1500, [](int r) { return r < 500 ? 3 : 2; }));
  moca::data::test::write_text(p + "/Protocol/subject109.dat",
                               pamap2_dat(1000, [](int) { return 1; }));
  moca::data::test::write_text(p + "/Optional/subject101.dat", pamap2_dat(1000, [](int) {
                                 return 5;  // running: not one of the 8
                               }));
  CHECK(moca::data::is_pamap2_folder(d));
  CHECK(moca::data::is_pamap2_folder(p));
  CHECK(moca::data::detect_format(d) == moca::data::DataFormat::kPamap2);
  moca::data::RawSetCounts n;
  const Windows w = moca::data::load_pamap2_windows(d, &n);
  // subject101: 3598 rows after the 2 NaN rows -> the first 3000: starts 0 (transient: 800 of
  // 1000), 500 (walking 700, transient 300), 1000, 1500 (walking 798 / ironing 202), 2000
  // (ironing 702); subject102: one window (a tie -> sitting); 109 and running left out.
  REQUIRE(w.size() == 5);
  CHECK(w.length == 1000);
  CHECK(w.sample_rate_hz == 100);
  CHECK(w.subject_names == std::vector<std::string>{"subject101", "subject102"});
  const auto& cn = w.class_names;
  REQUIRE(cn.size() == 8);
  const auto cls = [&](int i) { return cn[static_cast<size_t>(w.labels(i))]; };
  CHECK(cls(0) == "walking");
  CHECK(cls(1) == "walking");
  CHECK(cls(2) == "walking");
  CHECK(cls(3) == "ironing");
  CHECK(cls(4) == "sitting");
  CHECK(w.subjects(4) == 1);
  // x in g: window 1 (start 500) sample 0 is row 500; window 2 (start 1000) is row 1002 (the
  // NaN rows are joined over); window 3 ends at row 3001 -> 3.001 g, clipped to 3
  CHECK(w.window(0)(0, 0) == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(w.window(1)(0, 0) == doctest::Approx(1.002).epsilon(1e-6));
  CHECK(w.window(3)(0, 999) == 3.0f);
  CHECK(w.window(3)(0, 997) == doctest::Approx(2.999).epsilon(1e-6));
  CHECK(w.window(2)(1, 10) == doctest::Approx(-0.5).epsilon(1e-6));
  CHECK(w.window(2)(2, 10) == 3.0f);  // 5 g clipped
  CHECK(n.files == 4);
  CHECK(n.nan_rows == 2);
  CHECK(n.null_windows == 1);
  CHECK(n.other_windows == 1);
  CHECK(n.excluded_windows == 1);

  // the control: swapping two activities' ids swaps the labels and leaves the samples
  moca::data::test::write_text(p + "/Protocol/subject101.dat",
                               pamap2_dat(
                                   3600, [](int r) { return subject101_label(r, 17, 4); }, nan2));
  const Windows v = moca::data::load_pamap2_windows(d);
  CHECK(v.x == w.x);
  CHECK(v.class_names[static_cast<size_t>(v.labels(0))] == "ironing");
  CHECK(v.class_names[static_cast<size_t>(v.labels(3))] == "walking");

  // through --data: resampled to the model's rate like any source
  moca::data::DatasetOptions o;
  o.length = 500;  // 10 s at 50 Hz
  const moca::data::Dataset ds = moca::data::open_dataset("pamap2:" + d, o);
  CHECK(ds.windows.size() == 5);
  CHECK(ds.windows.sample_rate_hz == 50);
  CHECK(ds.source_rate_hz == 100);
}

TEST_CASE("pamap2: a line that is not 54 numbers names the file and line") {
  const std::string d = pamap2_tree("pamap2_bad");
  std::string body = pamap2_dat(3, [](int) { return 1; });
  body += "5.1 1 NaN 1 2 3\n";
  moca::data::test::write_text(d + "/PAMAP2_Dataset/Protocol/subject101.dat", body);
  CHECK_THROWS_WITH_AS(moca::data::load_pamap2_windows(d),
                       doctest::Contains("subject101.dat:4: 6 fields; PAMAP2's lines have 54"),
                       std::invalid_argument);
  moca::data::test::write_text(
      d + "/PAMAP2_Dataset/Protocol/subject101.dat",
      pamap2_dat(3, [](int) { return 1; }) + "5.1 x" + std::string(53 * 2, ' ') + "\n");
  CHECK_THROWS_WITH_AS(moca::data::load_pamap2_windows(d), doctest::Contains("holds 'x'"),
                       std::invalid_argument);
  fs::remove_all(d + "/PAMAP2_Dataset");
  CHECK_THROWS_AS(moca::data::load_pamap2_windows(d), std::runtime_error);
  CHECK(!moca::data::is_pamap2_folder(d));
}

namespace {

/// An OPPORTUNITY file: 250 numbers per line, MILLISEC, the right-wrist accelerometer (columns
/// 23-25) x = r milli g, y = -500, z = 4000 (clipped to 3 g), Locomotion (column 244) `label(r)`,
/// NaN in other sensors' columns on every 7th row and in y on the rows `nan_row(r)` says.
std::string opportunity_dat(int rows, const std::function<int(int)>& label,
                            const std::function<bool(int)>& nan_row = {}) {
  std::ostringstream s;
  for (int r = 0; r < rows; ++r) {
    s << r * 33;
    for (int c = 1; c < 250; ++c) {
      if (c == 22) {
        s << " " << r;
      } else if (c == 23) {
        s << " " << (nan_row && nan_row(r) ? "NaN" : "-500");
      } else if (c == 24) {
        s << " 4000";
      } else if (c == 243) {
        s << " " << label(r);
      } else {
        s << " " << (r % 7 == 0 && c < 100 ? "NaN" : "12");
      }
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace

TEST_CASE("opportunity: ssl-wearables' windows of the download, worked out by hand") {
  const std::string d = moca::data::test::scratch_dir("oppo");
  fs::remove_all(d);
  const std::string p = d + "/OpportunityUCIDataset/dataset";
  fs::create_directories(p);
  // 0-199 null, 200-599 stand (1), 600-999 lie (5); row 300 lost (NaN y)
  moca::data::test::write_text(p + "/S1-ADL1.dat",
                               opportunity_dat(
                                   1000, [](int r) { return r < 200 ? 0 : (r < 600 ? 1 : 5); },
                                   [](int r) { return r == 300; }));
  moca::data::test::write_text(p + "/S2-Drill.dat", opportunity_dat(400, [](int) { return 4; }));
  // null 150 of 330 (not more than half), yet the most frequent: left out after the vote
  moca::data::test::write_text(p + "/S3-ADL1.dat", opportunity_dat(330, [](int r) {
                                 return r < 150 ? 0 : (r < 250 ? 2 : 1);
                               }));
  CHECK(moca::data::detect_format(d) == moca::data::DataFormat::kOpportunity);
  CHECK(!moca::data::is_pamap2_folder(d));
  moca::data::RawSetCounts n;
  const Windows w = moca::data::load_opportunity_windows(d, &n);
  // S1: 999 rows -> the first 990: starts 0 (null 200 of 330), 165 (stand 295), 330 (stand 269,
  // lie 61), 495 (lie 226), 660 (lie); S2: one window of sit
  REQUIRE(w.size() == 5);
  CHECK(w.class_names == std::vector<std::string>{"stand", "walk", "lie", "sit"});
  CHECK(w.labels(0) == 0);
  CHECK(w.labels(1) == 0);
  CHECK(w.labels(2) == 2);
  CHECK(w.labels(3) == 2);
  CHECK(w.labels(4) == 3);
  CHECK(w.subject_names == std::vector<std::string>{"S1", "S2"});
  CHECK(w.length == 330);
  CHECK(w.sample_rate_hz == 30);
  CHECK(w.window(0)(0, 0) == doctest::Approx(0.165).epsilon(1e-6));
  CHECK(w.window(1)(0, 0) == doctest::Approx(0.331).epsilon(1e-6));  // row 300 joined over
  CHECK(w.window(1)(1, 5) == doctest::Approx(-0.5).epsilon(1e-6));
  CHECK(w.window(1)(2, 5) == 3.0f);  // 4 g clipped
  CHECK(n.nan_rows == 1);
  CHECK(n.null_windows == 1);
  CHECK(n.other_windows == 1);
  const moca::data::Dataset ds = moca::data::open_dataset("oppo:" + d, {});
  CHECK(ds.windows.size() == 5);
  CHECK(ds.windows.sample_rate_hz == 50);  // resampled like any source
}

TEST_CASE("wisdm: the 20 Hz grid, 10-s windows resized to 30 Hz, worked out by hand") {
  const std::string d = moca::data::test::scratch_dir("wisdm");
  fs::remove_all(d);
  const std::string p = d + "/wisdm-dataset/raw/watch/accel";
  fs::create_directories(p);
  const long long t0 = 90426708196641LL, P = 50000000LL;
  std::ostringstream a;
  a.precision(10);
  // A: 400 samples, x = 9.81 k (k g), 10 ms late after the first; one repeated time stamp
  for (int k = 0; k < 400; ++k) {
    a << "1600,A," << t0 + k * P + (k > 0 ? 10000000LL : 0) << "," << 9.81 * k << ",9.81," << -19.62
      << ";\n";
    if (k == 7) a << "1600,A," << t0 + k * P + 10000000LL << ",999,999,999;\n";
  }
  // B: 400 samples without k = 150: grid point 150 is 50 ms from both neighbours (missing)
  for (int k = 0; k < 400; ++k) {
    if (k != 150) a << "1600,B," << t0 + k * P << "," << 9.81 << ",0,0;\n";
  }
  moca::data::test::write_text(p + "/data_1600_accel_watch.txt", a.str());
  // subject 1601: C in reverse order (sorted by time); subject 1616 is left out
  std::ostringstream c, e;
  for (int k = 199; k >= 0; --k) c << "1601,C," << t0 + k * P << ",0," << 9.81 * 2 << ",0;\n";
  for (int k = 0; k < 200; ++k) e << "1616,D," << t0 + k * P << ",1,1,1;\n";
  moca::data::test::write_text(p + "/data_1601_accel_watch.txt", c.str());
  moca::data::test::write_text(p + "/data_1616_accel_watch.txt", e.str());
  CHECK(moca::data::detect_format(d) == moca::data::DataFormat::kWisdm);
  moca::data::RawSetCounts n;
  const Windows w = moca::data::load_wisdm_windows(d, &n);
  // A: starts 0, 100, 200; B: starts 0 and 100 hold point 150, 200 does not; C: one window
  REQUIRE(w.size() == 5);
  CHECK(w.length == 300);
  CHECK(w.sample_rate_hz == 30);
  CHECK(w.subject_names == std::vector<std::string>{"1600", "1601"});
  const auto cls = [&](int i) { return w.class_names[static_cast<size_t>(w.labels(i))]; };
  CHECK(cls(0) == "walking");
  CHECK(cls(2) == "walking");
  CHECK(cls(3) == "jogging");
  CHECK(cls(4) == "stairs");
  CHECK(w.subjects(4) == 1);
  // the resize: output t lies at grid position t * 199 / 299
  for (int t : {0, 1, 150, 298, 299}) {
    CHECK(w.window(1)(0, t) == doctest::Approx(100 + t * 199.0 / 299.0).epsilon(1e-6));
  }
  CHECK(w.window(0)(0, 7 * 299 / 199 + 1) < 20.0f);  // the repeated stamp's 999 is not used
  CHECK(w.window(0)(1, 5) == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(w.window(0)(2, 5) == doctest::Approx(-2.0).epsilon(1e-6));
  CHECK(w.window(4)(1, 100) == doctest::Approx(2.0).epsilon(1e-6));
  CHECK(n.nan_rows == 1);
  CHECK(n.null_windows == 2);
  CHECK(n.excluded_windows == 1);
  // bad lines name file and line
  moca::data::test::write_text(p + "/data_1602_accel_watch.txt",
                               "1602,A,1,1,2,3;\n1602,N,2,1,2,3;\n");
  CHECK_THROWS_WITH_AS(moca::data::load_wisdm_windows(d),
                       doctest::Contains("data_1602_accel_watch.txt:2: activity code 'N'"),
                       std::invalid_argument);
  moca::data::test::write_text(p + "/data_1602_accel_watch.txt", "1602,A,1x,1,2,3;\n");
  CHECK_THROWS_WITH_AS(moca::data::load_wisdm_windows(d),
                       doctest::Contains("'1x' is not an integer"), std::invalid_argument);
  moca::data::test::write_text(p + "/data_1602_accel_watch.txt", "1602,A,1,2,3;\n");
  CHECK_THROWS_WITH_AS(moca::data::load_wisdm_windows(d), doctest::Contains("5 fields"),
                       std::invalid_argument);
}
