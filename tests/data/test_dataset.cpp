// open_dataset: specs, detection, modality groups, resampling, crop/pad, export round trips and
// every bad-input case of issue #10.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/resample.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::bytes_of;
using moca::data::test::contains;
using moca::data::test::error_text;
using moca::data::test::utf32;
using moca::data::test::write_raw_npy;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Least-squares amplitude of the f-Hz sinusoid in y (samples at rate hz), over [from, to).
double amplitude_at(const RowMatrixXf& y, double f, double hz, int from, int to) {
  double ss = 0, sc = 0, cc = 0, ys = 0, yc = 0;
  for (int j = from; j < to; ++j) {
    const double s = std::sin(2 * kPi * f * j / hz), c = std::cos(2 * kPi * f * j / hz);
    ss += s * s;
    sc += s * c;
    cc += c * c;
    ys += y(0, j) * s;
    yc += y(0, j) * c;
  }
  const double det = ss * cc - sc * sc;
  const double a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det;
  return std::hypot(a, b);
}

// An ssl-wearables folder: n windows, 9 channels (3 groups of 3), L samples at `hz`, string
// labels and string pids, meta.json with modalities and sample_rate.
std::string make_npy_folder(const std::string& name, int n, int len, double hz) {
  const std::string d = moca::data::test::scratch_dir(name);
  std::vector<double> x;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 9; ++c)
      for (int t = 0; t < len; ++t)
        x.push_back(std::sin(2 * kPi * (1.0 + (i % 3)) * t / hz + c) + 0.1 * c);
  moca::write_npy(d + "/X.npy", {n, 9, len}, x.data());
  std::vector<std::string> y, pid;
  const char* classes[] = {"walk", "sit", "run"};
  for (int i = 0; i < n; ++i) {
    y.push_back(classes[i % 3]);
    pid.push_back("p" + std::to_string(i % 4));
  }
  moca::write_npy_strings(d + "/Y.npy", y);
  moca::write_npy_strings(d + "/pid.npy", pid);
  char meta[256];
  std::snprintf(meta, sizeof meta,
                "{\"modalities\": {\"acc\": [0, 1, 2], \"gyro\": [3, 4, 5], \"mag\": [6, 7, 8]}, "
                "\"sample_rate\": %g}",
                hz);
  moca::data::test::write_text(d + "/meta.json", meta);
  return d;
}

void check_same(const Windows& a, const Windows& b) {
  REQUIRE(a.size() == b.size());
  CHECK(a.channels == b.channels);
  CHECK(a.length == b.length);
  CHECK(a.sample_rate_hz == b.sample_rate_hz);
  CHECK(a.channel_names == b.channel_names);
  CHECK(a.class_names == b.class_names);
  CHECK(a.subject_names == b.subject_names);
  CHECK(a.modalities == b.modalities);
  CHECK(a.labels == b.labels);
  CHECK(a.subjects == b.subjects);
  CHECK(std::memcmp(a.x.data(), b.x.data(), sizeof(float) * static_cast<size_t>(a.x.size())) == 0);
}

}  // namespace

TEST_CASE("resample: a sinusoid keeps its frequency and amplitude; aliasing is removed") {
  // 25 -> 50 Hz: 3 Hz, amplitude 2, 100 samples -> 200.
  RowMatrixXf x(1, 100);
  for (int t = 0; t < 100; ++t) x(0, t) = static_cast<float>(2 * std::sin(2 * kPi * 3 * t / 25.0));
  const RowMatrixXf y = resample_bandlimited(x, 25, 50);
  REQUIRE(y.cols() == 200);
  double err = 0;
  for (int j = 30; j < 170; ++j)
    err = std::max(err, std::abs(y(0, j) - 2 * std::sin(2 * kPi * 3 * j / 50.0)));
  CHECK(err < 0.01);
  CHECK(amplitude_at(y, 3, 50, 30, 170) == doctest::Approx(2.0).epsilon(0.005));
  // The fit at a neighbouring frequency explains much less: the frequency is kept.
  CHECK(amplitude_at(y, 3.5, 50, 30, 170) < 1.0);
  // 100 -> 50 Hz: 2 Hz (amplitude 1) + 40 Hz (above the new Nyquist 25 Hz, amplitude 0.5).
  RowMatrixXf z(1, 400);
  for (int t = 0; t < 400; ++t)
    z(0, t) = static_cast<float>(std::sin(2 * kPi * 2 * t / 100.0) +
                                 0.5 * std::sin(2 * kPi * 40 * t / 100.0));
  const RowMatrixXf d = resample_bandlimited(z, 100, 50);
  REQUIRE(d.cols() == 200);
  double derr = 0, nerr = 0;
  for (int j = 40; j < 160; ++j) {
    const double truth = std::sin(2 * kPi * 2 * j / 50.0);
    derr = std::max(derr, std::abs(d(0, j) - truth));
    nerr = std::max(nerr, std::abs(z(0, 2 * j) - truth));  // control: take every other sample
  }
  CHECK(derr < 0.02);
  CHECK(nerr > 0.4);  // nearest-sample decimation keeps the 40 Hz tone as a 10 Hz alias
  RowMatrixXf residual(1, 200);
  for (int j = 0; j < 200; ++j)
    residual(0, j) = d(0, j) - static_cast<float>(std::sin(2 * kPi * 2 * j / 50.0));
  CHECK(amplitude_at(residual, 10, 50, 40, 160) < 0.005);  // no 10 Hz alias left
  // A constant stays constant (weights sum to 1), at the edges too.
  const RowMatrixXf c = resample_bandlimited(RowMatrixXf::Constant(2, 37, 3.25f), 30, 50);
  CHECK(c.cols() == 62);
  CHECK((c.array() - 3.25f).abs().maxCoeff() < 1e-5f);
  CHECK_THROWS_AS(resample_bandlimited(x, 0, 50), std::invalid_argument);
}

TEST_CASE("fit_length: centre crop and edge padding") {
  RowMatrixXf x(1, 5);
  x << 1, 2, 3, 4, 5;
  CHECK(fit_length(x, 3) == (RowMatrixXf(1, 3) << 2, 3, 4).finished());
  CHECK(fit_length(x, 2) == (RowMatrixXf(1, 2) << 2, 3).finished());
  CHECK(fit_length(x, 8) == (RowMatrixXf(1, 8) << 1, 1, 2, 3, 4, 5, 5, 5).finished());
  CHECK(fit_length(x, 5) == x);
  CHECK_THROWS_AS(fit_length(x, 0), std::invalid_argument);
}

TEST_CASE("data spec: prefixes, generator keys, detection, printable form") {
  const DataSpec g = parse_data_spec("generator:coupling=0.3,seed=7");
  CHECK(g.format == DataFormat::kGenerator);
  CHECK(g.to_string() == "generator:coupling=0.3,seed=7");
  CHECK(parse_data_spec("npy:/x/y").to_string() == "npy:/x/y");
  const std::string fx = moca::data::test::fixture_dir();
  CHECK(parse_data_spec(fx + "/hapt").format == DataFormat::kHapt);
  CHECK(parse_data_spec(fx + "/hmp").format == DataFormat::kHmp);
  CHECK(parse_data_spec(fx + "/hmp", DataFormat::kHapt).format == DataFormat::kHapt);  // forced
  CHECK(contains(error_text<std::invalid_argument>([] { parse_data_spec("generator:bogus=1"); }),
                 "unknown generator key 'bogus'"));
  CHECK(contains(
      error_text<std::invalid_argument>([&] { parse_data_spec("hapt:" + fx, DataFormat::kNpy); }),
      "contradicts"));
  // (the library names the field; each program its flag: test_errors.py)
  CHECK(contains(error_text<std::invalid_argument>([&] { parse_data_spec(fx); }),
                 "DataOptions::data: cannot tell the format"));
  CHECK_THROWS_AS(parse_data_spec("/nonexistent/folder"), std::runtime_error);
  // The resolved generator spec lists every key and opens to the same windows.
  DatasetOptions o;
  o.use_env = false;
  o.length = 40;
  const Dataset a = open_dataset("generator:windows=12,coupling=0.5", o);
  CHECK(a.spec.to_string() == "generator:windows=12,coupling=0.5,noise=0.02,subjects=10,seed=0");
  CHECK(a.windows.size() == 12);
  CHECK(format_modalities(a.windows.modalities) == "acc=0-2,gyro=3-5");
  check_same(open_dataset(a.spec.to_string(), o).windows, a.windows);
  const Dataset def = open_dataset("", o);
  CHECK(def.origin == "default");
  CHECK(def.spec.format == DataFormat::kGenerator);
}

TEST_CASE("format registry: rows, detection order, environment, the adl alias") {
  // Every format a spec can name has one row; the generator alone is never detected.
  for (const auto& e : kDataFormatNames) {
    if (e.value == DataFormat::kAuto) continue;
    const FormatEntry& row = format_entry(e.value);
    CHECK(row.format == e.value);
    CHECK(static_cast<bool>(row.read));
    CHECK((row.detect == nullptr) == (e.value == DataFormat::kGenerator));
  }
  CHECK_THROWS_AS(format_entry(DataFormat::kAuto), std::logic_error);
  const std::string fx = moca::data::test::fixture_dir();
  CHECK(parse_data_spec("adl:" + fx + "/hmp").format == DataFormat::kHmp);
  // The message lists what each detectable row looks for.
  const std::string why = error_text<std::invalid_argument>([&] { parse_data_spec(fx); });
  for (const FormatEntry& row : format_registry()) {
    if (row.detect != nullptr) CHECK(contains(why, row.looks_for));
  }
  // Environment: an empty --data is $MOCA_HAPT_DIR's folder; $MOCA_HMP_DIR (adl-loso's) is not a
  // default source (control), and use_env = false reads neither.
  const char* hapt = std::getenv("MOCA_HAPT_DIR");
  const char* hmp = std::getenv("MOCA_HMP_DIR");
  const std::string saved_hapt = hapt ? hapt : "", saved_hmp = hmp ? hmp : "";
  ::unsetenv("MOCA_HAPT_DIR");
  ::setenv("MOCA_HMP_DIR", "/env/hmp", 1);
  CHECK(default_data_spec() == "generator");
  CHECK(folder_from_environment(DataFormat::kHmp) == "/env/hmp");
  CHECK(folder_from_environment(DataFormat::kNpy).empty());
  ::setenv("MOCA_HAPT_DIR", "/env/hapt", 1);
  CHECK(default_data_spec() == "hapt:/env/hapt");
  CHECK(default_data_spec(false) == "generator");
  if (hapt)
    ::setenv("MOCA_HAPT_DIR", saved_hapt.c_str(), 1);
  else
    ::unsetenv("MOCA_HAPT_DIR");
  if (hmp)
    ::setenv("MOCA_HMP_DIR", saved_hmp.c_str(), 1);
  else
    ::unsetenv("MOCA_HMP_DIR");
}

TEST_CASE("modalities: parse, format, errors") {
  const auto g = parse_modalities("acc=0-2,gyro=3+5,mag=4", 6);
  REQUIRE(g.size() == 3);
  CHECK(g[1].channels == std::vector<int>{3, 5});
  CHECK(format_modalities(g) == "acc=0-2,gyro=3+5,mag=4");
  CHECK(contains(error_text<std::invalid_argument>([] { parse_modalities("acc=0-6", 6); }),
                 "outside [0, 6)"));
  CHECK(contains(error_text<std::invalid_argument>([] { parse_modalities("a=0-2,b=2-3", 6); }),
                 "channel 2 is in two groups"));
  CHECK(contains(error_text<std::invalid_argument>([] { parse_modalities("a=0-2,a=3", 6); }),
                 "used twice"));
  CHECK(contains(error_text<std::invalid_argument>([] { parse_modalities("acc", 6); }),
                 "not name=channels"));
  CHECK(contains(error_text<std::invalid_argument>([] { parse_modalities("a=x", 6); }),
                 "not a channel index"));
  // --modalities selects channels: acc only.
  DatasetOptions o;
  o.use_env = false;
  o.length = 40;
  o.modalities = "acc=0-2";
  const Dataset d = open_dataset("generator:windows=5", o);
  CHECK(d.windows.channels == 3);
  CHECK(d.windows.channel_names == std::vector<std::string>{"acc_x", "acc_y", "acc_z"});
  CHECK(contains(
      error_text<std::invalid_argument>([&] { require_modalities(d.windows, "per-modality"); }),
      "per-modality needs >= 2 modality groups; the data has 1 (acc=0-2)"));
  o.modalities = "gyro=3-5,acc=0-2";
  const Dataset r = open_dataset("generator:windows=5", o);
  CHECK(r.windows.channel_names.front() == "gyro_x");
  CHECK(require_modalities(r.windows, "x") == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}});
}

TEST_CASE("modalities by channel name: both separators, and the errors") {
  const std::vector<std::string> names = {"ax1", "ay1", "az1", "gx-1", "gy1", "gz1"};
  const auto a = parse_modalities("acc=ax1,ay1,az1;gyro=gx-1,gy1,gz1", 6, names);
  REQUIRE(a.size() == 2);
  CHECK(a[0].channels == std::vector<int>{0, 1, 2});
  CHECK(a[1].channels == std::vector<int>{3, 4, 5});  // 'gx-1' is a name, not a range
  const auto b = parse_modalities("gyro=gz1+gy1,acc=0-1", 6, names);  // names and indices mixed
  CHECK(b[0].channels == std::vector<int>{4, 5});
  CHECK(b[1].channels == std::vector<int>{0, 1});
  CHECK(contains(error_text<std::invalid_argument>(
                     [&] { parse_modalities("acc=ax1,mx1;gyro=gy1", 6, names); }),
                 "has 'mx1', neither a channel name of the data (ax1, ay1, az1, gx-1, gy1, gz1) "
                 "nor a channel index"));
  CHECK(contains(
      error_text<std::invalid_argument>([&] { parse_modalities("a=ax1,ay1;b=ay1", 6, names); }),
      "channel 1 is in two groups ('a' and 'b')"));
  // through open_dataset: the generator's channels by name, in the order given
  DatasetOptions o;
  o.use_env = false;
  o.length = 40;
  o.modalities = "gyro=gyro_x,gyro_y,gyro_z;acc=acc_x,acc_y,acc_z";
  const Dataset d = open_dataset("generator:windows=5", o);
  CHECK(d.windows.channel_names ==
        std::vector<std::string>{"gyro_x", "gyro_y", "gyro_z", "acc_x", "acc_y", "acc_z"});
  // the same data as by index
  o.modalities = "gyro=3-5,acc=0-2";
  CHECK(open_dataset("generator:windows=5", o).windows.x == d.windows.x);
}

TEST_CASE("open_dataset --labels: a label scheme's file instead of Y.npy") {
  const std::string d = make_npy_folder("labels_scheme", 12, 50, 25.0);
  // a second scheme: 2 classes by window parity
  std::vector<std::string> coarse;
  for (int i = 0; i < 12; ++i) coarse.push_back(i % 2 ? "active" : "rest");
  moca::write_npy_strings(d + "/Y_coarse.npy", coarse);
  DatasetOptions o;
  o.use_env = false;
  o.length = 50;
  o.target_rate_hz = 25.0;
  const Dataset by_y = open_dataset("npy:" + d, o);
  CHECK(by_y.windows.class_names == std::vector<std::string>{"run", "sit", "walk"});
  o.labels = "Y_coarse.npy";
  const Dataset by_scheme = open_dataset("npy:" + d, o);
  CHECK(by_scheme.windows.class_names == std::vector<std::string>{"active", "rest"});
  for (int i = 0; i < 12; ++i) CHECK(by_scheme.windows.labels[i] == (i % 2 ? 0 : 1));
  CHECK(by_scheme.windows.x == by_y.windows.x);  // the windows are the same
  // a path works too; a missing file names what the folder holds
  o.labels = d + "/Y_coarse.npy";
  CHECK(open_dataset("npy:" + d, o).windows.labels == by_scheme.windows.labels);
  o.labels = "Y_fine.npy";
  CHECK(contains(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }),
                 "DatasetOptions::labels (Y_fine.npy): no such file in '" + d +
                     "' (it holds Y.npy, Y_coarse.npy)"));
  // without Y.npy the windows are unlabelled, and a note names the schemes found
  std::filesystem::remove(d + "/Y.npy");
  o.labels.clear();
  const Dataset none = open_dataset("npy:" + d, o);
  CHECK((none.windows.labels.array() == -1).all());
  bool noted = false;
  for (const auto& n : none.notes)
    noted = noted || contains(n, "Y_coarse.npy (choose one with --labels)");
  CHECK(noted);
}

TEST_CASE("open_dataset: a 25 Hz .npy folder with string labels, pids and 3 groups") {
  const std::string d = make_npy_folder("ds_npy25", 12, 100, 25);
  DatasetOptions o;
  o.use_env = false;
  const Dataset ds = open_dataset(d, o);
  CHECK(ds.spec.to_string() == "npy:" + d);
  const Windows& w = ds.windows;
  CHECK(w.size() == 12);
  CHECK(w.length == 200);
  CHECK(w.sample_rate_hz == 50);
  CHECK(ds.source_rate_hz == 25);
  CHECK(ds.source_length == 100);
  CHECK(format_modalities(w.modalities) == "acc=0-2,gyro=3-5,mag=6-8");
  CHECK(w.class_names == std::vector<std::string>{"run", "sit", "walk"});
  CHECK(w.subject_names == std::vector<std::string>{"p0", "p1", "p2", "p3"});
  CHECK(w.labels(0) == 2);  // walk
  CHECK(w.subjects(5) == 1);
  REQUIRE(!ds.notes.empty());
  CHECK(contains(ds.notes.back(), "resampled 25 -> 50 Hz"));
  // The resampled window is the same 1 Hz sinusoid on the new grid (interior samples).
  double err = 0;
  for (int t = 40; t < 160; ++t)
    err = std::max(err, std::abs(w.window(0)(0, t) - std::sin(2 * kPi * t / 50.0)));
  CHECK(err < 0.01);
  // A shorter model window: resampled to 200 then centre-cropped to 150.
  o.length = 150;
  const Dataset c = open_dataset("npy:" + d, o);
  CHECK(c.windows.length == 150);
  CHECK(contains(c.notes.back(), "centre-cropped 200 -> 150"));
  // --sample-rate overrides meta.json: at 50 Hz nothing is resampled, 100 -> 200 edge-padded.
  o.length = 200;
  o.sample_rate_hz = 50;
  const Dataset p = open_dataset(d, o);
  CHECK(p.windows.window(0)(0, 0) == p.windows.window(0)(0, 49));
  CHECK(contains(p.notes.back(), "edge-padded 100 -> 200"));
  // keep-classes relabels in the given order.
  o.sample_rate_hz = 0;
  o.keep_classes = "sit,walk";
  const Dataset k = open_dataset(d, o);
  CHECK(k.windows.size() == 8);
  CHECK(k.windows.class_names == std::vector<std::string>{"sit", "walk"});
  CHECK(k.windows.labels(0) == 1);
  o.keep_classes = "swim";
  CHECK(contains(error_text<std::invalid_argument>([&] { open_dataset(d, o); }),
                 "class 'swim' is not in the data (classes: run, sit, walk)"));
}

TEST_CASE("export -> open_dataset round-trips every format bit for bit") {
  DatasetOptions o;
  o.use_env = false;
  o.length = 40;
  const std::string fx = moca::data::test::fixture_dir();
  const std::vector<std::string> specs = {"generator:windows=9,coupling=0.4",
                                          "hapt:" + fx + "/hapt", "hmp:" + fx + "/hmp",
                                          "npy:" + make_npy_folder("ds_rt_src", 6, 40, 50)};
  for (const auto& spec : specs) {
    CAPTURE(spec);
    const Dataset a = open_dataset(spec, o);
    REQUIRE(a.windows.size() > 0);
    const std::string out = moca::data::test::scratch_dir("ds_rt_" + to_string(a.spec.format));
    export_dataset(a.windows, out);
    const Dataset b = open_dataset(out, o);
    CHECK(b.spec.format == DataFormat::kNpy);
    CHECK(b.notes.empty());  // nothing resampled, padded or inferred
    check_same(a.windows, b.windows);
  }
}

TEST_CASE("open_dataset: bad .npy input gives a clear error naming the file") {
  const std::string d = moca::data::test::scratch_dir("ds_bad");
  const std::string x = d + "/X.npy";
  DatasetOptions o;
  o.use_env = false;
  o.length = 3;
  auto err = [&](const std::string& expect) {
    const std::string msg = error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); });
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  const std::vector<float> ok(12, 1.0f);
  write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(ok));
  write_raw_npy(d + "/Y.npy", "<i8", "(3,)", bytes_of(std::vector<std::int64_t>{0, 1, 1}));
  err("has 3 entries, X has N = 2");  // N disagrees between X and Y
  write_raw_npy(d + "/Y.npy", "<i8", "(2,)", bytes_of(std::vector<std::int64_t>{0, 1}));
  write_raw_npy(d + "/pid.npy", "<i8", "(1,)", bytes_of(std::vector<std::int64_t>{0}));
  err("subject ids has 1 entries, X has N = 2");  // ... and pid
  write_raw_npy(d + "/pid.npy", "<i8", "(2,)", bytes_of(std::vector<std::int64_t>{0, 1}));
  // an unstated rate, where the windows must be brought to the model's: an error naming the field
  // (each program names its flag, Python its keyword: test_benchmark_folders.py)
  err("sample rate unknown (no DatasetOptions::sample_rate, no sample_rate in meta.json); state "
      "it with DatasetOptions::sample_rate HZ");
  o.sample_rate_hz = 50;
  CHECK(open_dataset("npy:" + d, o).windows.size() == 2);
  write_raw_npy(x, "|O", "(2, 2, 3)", std::string(96, '\0'));
  err("object array");
  write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(ok), true);
  err("Fortran");
  write_raw_npy(x, ">f4", "(2, 2, 3)", bytes_of(ok));
  err("'>f4'");
  write_raw_npy(x, "<i4", "(2, 2, 3)", bytes_of(std::vector<std::int32_t>(12, 1)));
  err("dtype '<i4'");
  write_raw_npy(x, "<f4", "(2, 6)", bytes_of(ok));
  err("got 2 dimensions");
  write_raw_npy(x, "<f4", "(2, 2, 3, 1)", bytes_of(ok));
  err("got 4 dimensions");
  o.npy_layout = NpyLayout::kChannelsFirst;
  write_raw_npy(x, "<f4", "(2, 0, 3)", "");
  err("C = 0");
  write_raw_npy(x, "<f4", "(2, 3, 0)", "");
  err("L = 0");
  o.npy_layout = NpyLayout::kAuto;
  std::vector<float> bad = ok;
  bad[7] = NAN;
  bad[8] = INFINITY;
  write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(bad));
  err("2 non-finite values (NaN/Inf) in 1 of 2 windows; the first is window 1 channel 0 sample 1");
  o.drop_nonfinite = true;
  const Dataset dropped = open_dataset("npy:" + d, o);
  CHECK(dropped.windows.size() == 1);
  CHECK(dropped.dropped_nonfinite == 1);
  CHECK(dropped.windows.labels(0) == 0);
  CHECK(contains(dropped.notes.front(), "dropped 1 windows"));
  o.drop_nonfinite = false;
  write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(ok));
  o.modalities = "acc=0-2";
  err("outside [0, 2)");
  o.modalities = "a=0-1,b=1";
  err("channel 1 is in two groups");
  o.modalities.clear();
  moca::data::test::write_text(d + "/meta.json", "{\"modalities\": {\"a\": [0, 5]}}");
  err("channel 5 is outside [0, 2)");
  moca::data::test::write_text(d + "/meta.json", "{\"modalities\": {\"a\": [0, 1], \"b\": [1]}}");
  err("channel 1 is in two modalities");
  moca::data::test::write_text(d + "/meta.json", "{\"sample_rate\": 25}");
  o.sample_rate_hz = -1;
  CHECK_THROWS_AS(open_dataset("npy:" + d, o), std::invalid_argument);
}

// Issue 31: data sets as benchmark releases ship them (ssl-wearables: X.npy, Y.npy, pid.npy,
// no channel names, sometimes no meta.json at all).
TEST_CASE("open_dataset: channel names, names from modality groups, meta.json's unknown keys") {
  const std::string d = moca::data::test::scratch_dir("ds_names");
  std::vector<float> x(2 * 6 * 30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17);
  write_raw_npy(d + "/X.npy", "<f4", "(2, 6, 30)", bytes_of(x));
  DatasetOptions o;
  o.use_env = false;
  o.keep_rate_and_length = true;
  o.sample_rate_hz = 30;
  // no names anywhere: the reader's stand-ins, one group by prefix, nothing renamed
  Dataset plain = open_dataset("npy:" + d, o);
  CHECK(plain.windows.channel_names ==
        std::vector<std::string>{"ch0", "ch1", "ch2", "ch3", "ch4", "ch5"});
  // modality groups name them: a group of three is x, y, z; any other size is numbered
  o.modalities = "acc=0-2,gyro=3-5";
  CHECK(open_dataset("npy:" + d, o).windows.channel_names ==
        std::vector<std::string>{"acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"});
  o.modalities = "acc=0-2,ppg=4-5";  // channel 3 dropped by --modalities
  const Dataset two = open_dataset("npy:" + d, o);
  CHECK(two.windows.channel_names ==
        std::vector<std::string>{"acc_x", "acc_y", "acc_z", "ppg_0", "ppg_1"});
  CHECK(contains(two.notes.back(), "channels named from their modality groups: acc_x,"));
  // --channel-names wins, in order; wrong count or a repeated name is a clear error
  o.modalities.clear();
  o.channel_names = {"a_x", "a_y", "a_z", "g_x", "g_y", "g_z"};
  const Dataset named = open_dataset("npy:" + d, o);
  CHECK(named.windows.channel_names == o.channel_names);
  CHECK(format_modalities(named.windows.modalities) == "a=0-2,g=3-5");  // groups by prefix
  o.channel_names = {"ax", "ay"};
  CHECK(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }) ==
        "DatasetOptions::channel_names: 2 names for the data's 6 channels (npy:" + d + ")");
  o.channel_names = {"a_x", "a_y", "a_x", "g_x", "g_y", "g_z"};
  CHECK(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }) ==
        "DatasetOptions::channel_names: 'a_x' is named twice");
  o.channel_names.clear();
  // meta.json keys the reader does not know: a warning naming the nearest known key
  moca::write_output_text(d + "/meta.json",
                          R"({"classes": ["a", "b"], "sample_rate": 30, "fs": 30})");
  const Dataset warned = open_dataset("npy:" + d, o);
  std::string notes;
  for (const auto& n : warned.notes) notes += n + "\n";
  CHECK(contains(notes, "unknown key 'classes' ignored (nearest known key: 'class_names')"));
  CHECK(contains(notes, "unknown key 'fs' ignored"));
  CHECK(!contains(notes, "'sample_rate' ignored"));
}

TEST_CASE("open_dataset --segment: sub-windows that concatenate back to the window") {
  const std::string d = moca::data::test::scratch_dir("ds_segment");
  const int n = 3, c = 2, len = 300;  // 10-s windows at 30 Hz
  std::vector<float> x(static_cast<size_t>(n * c * len));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.01 * i) + i % 7);
  write_raw_npy(d + "/X.npy", "<f4", "(3, 2, 300)", bytes_of(x));
  write_raw_npy(d + "/Y.npy", "<i8", "(3,)", bytes_of(std::vector<std::int64_t>{2, 0, 1}));
  write_raw_npy(d + "/pid.npy", "<i8", "(3,)", bytes_of(std::vector<std::int64_t>{7, 7, 9}));
  DatasetOptions o;
  o.use_env = false;
  o.keep_rate_and_length = true;
  o.sample_rate_hz = 30;
  o.segment = "5";  // 10 s -> two 5-s windows, nothing left over
  const Dataset whole = open_dataset("npy:" + d, [&] {
    DatasetOptions w = o;
    w.segment.clear();
    return w;
  }());
  const Dataset s = open_dataset("npy:" + d, o);
  REQUIRE(s.windows.size() == 2 * n);
  CHECK(s.windows.length == 150);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 2; ++k) {
      CHECK(s.windows.labels[2 * i + k] == whole.windows.labels[i]);
      CHECK(s.windows.subjects[2 * i + k] == whole.windows.subjects[i]);
    }
    RowMatrixXf joined(c, len);
    joined << s.windows.window(2 * i), s.windows.window(2 * i + 1);
    CHECK(joined == whole.windows.window(i));  // bit for bit
  }
  // 4 s every 3 s: floor((300 - 120) / 90) + 1 = 3 sub-windows, none left; 4 s alone: 2 and a
  // 60-sample tail, dropped and said
  o.segment = "4:3";
  CHECK(open_dataset("npy:" + d, o).windows.size() == 3 * n);
  o.segment = "4";
  const Dataset tail = open_dataset("npy:" + d, o);
  CHECK(tail.windows.size() == 2 * n);
  CHECK(contains(tail.notes.front(), "the last 60 samples of each dropped"));
  CHECK(tail.windows.window(1) == whole.windows.window(0).middleCols(120, 120));
  // a segment longer than the window, a malformed one, and a segment without a rate
  o.segment = "11";
  CHECK(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }) ==
        "DatasetOptions::segment (11) is 330 samples at 30 Hz, longer than the windows (300 "
        "samples)");
  o.segment = "5:x";
  CHECK(contains(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }),
                 "DatasetOptions::segment (5:x) must be SECONDS[:STRIDE]"));
  o.segment = "5";
  o.sample_rate_hz = 0;
  CHECK(contains(error_text<std::invalid_argument>([&] { open_dataset("npy:" + d, o); }),
                 "sample rate unknown"));
  // brought to the model's 50 Hz and 5 s after segmenting: 250 samples per sub-window
  o.sample_rate_hz = 30;
  o.keep_rate_and_length = false;
  o.length = 250;
  const Dataset model = open_dataset("npy:" + d, o);
  CHECK(model.windows.size() == 2 * n);
  CHECK(model.windows.length == 250);
  CHECK(model.windows.sample_rate_hz == 50.0);
}
