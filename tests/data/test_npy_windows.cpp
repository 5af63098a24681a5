#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "moca/common/matrix_io.hpp"
#include "moca/data/npy_windows.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

using moca::data::test::bytes_of;
using moca::data::test::utf32;
using moca::data::test::write_raw_npy;

TEST_CASE("matrix_io: string dtypes '<U..' and '|S..' read as UTF-8, written as '<U..'") {
  const std::string d = moca::data::test::scratch_dir("npy_strings");
  write_raw_npy(d + "/u.npy", "<U5", "(3,)", utf32({U"walk", U"", U"caf\u00e9!"}, 5));
  const moca::NdArray a = moca::read_npy(d + "/u.npy");
  CHECK(a.is_string());
  CHECK(a.data.empty());
  REQUIRE(a.strings.size() == 3);
  CHECK(a.strings[0] == "walk");
  CHECK(a.strings[1] == "");
  CHECK(a.strings[2] == "caf\xc3\xa9!");
  write_raw_npy(d + "/s.npy", "|S3", "(2,)", std::string("ab\0xyz", 6));
  const moca::NdArray b = moca::read_npy(d + "/s.npy");
  REQUIRE(b.strings.size() == 2);
  CHECK(b.strings[0] == "ab");
  CHECK(b.strings[1] == "xyz");
  // 2-D Fortran-order strings come back in C order.
  write_raw_npy(d + "/f.npy", "<U1", "(2, 2)", utf32({U"a", U"c", U"b", U"d"}, 1), true);
  CHECK(moca::read_npy(d + "/f.npy").strings == std::vector<std::string>{"a", "b", "c", "d"});
  // Writer: width = longest string; reading it back gives the same strings.
  moca::write_npy_strings(d + "/w.npy", {"f1", "m10", "\xc3\xa9"});
  const moca::NdArray c = moca::read_npy(d + "/w.npy");
  CHECK(c.dtype == "<U3");
  CHECK(c.shape == std::vector<std::int64_t>{3});
  CHECK(c.strings == std::vector<std::string>{"f1", "m10", "\xc3\xa9"});
  CHECK_THROWS_AS(moca::write_npy_strings(d + "/bad.npy", {"\xff"}), std::invalid_argument);
  write_raw_npy(d + "/trunc.npy", "<U4", "(3,)", utf32({U"ab", U"cd"}, 4));
  CHECK(contains(error_text<std::invalid_argument>([&] { moca::read_npy(d + "/trunc.npy"); }),
                 "truncated"));
  write_raw_npy(d + "/obj.npy", "|O", "(3,)", "xxxxxxxx");
  CHECK_THROWS_AS(moca::read_npy(d + "/obj.npy"), std::invalid_argument);
}

TEST_CASE("npy_windows: ssl-wearables layout N x L x C with string labels and pids") {
  const std::string d = moca::data::test::scratch_dir("npy_ssl");
  // N = 3 windows, L = 5, C = 2 (channels last), float64; x[i][t][c] = i*100 + t*10 + c.
  std::vector<double> x;
  for (int i = 0; i < 3; ++i)
    for (int t = 0; t < 5; ++t)
      for (int c = 0; c < 2; ++c) x.push_back(i * 100 + t * 10 + c);
  write_raw_npy(d + "/X.npy", "<f8", "(3, 5, 2)", bytes_of(x));
  write_raw_npy(d + "/Y.npy", "<U12", "(3,)", utf32({U"walk", U"climb_stairs", U"walk"}, 12));
  write_raw_npy(d + "/pid.npy", "<U2", "(3,)", utf32({U"m1", U"f1", U"m1"}, 2));
  const Windows w = read_windows_npy(d);
  CHECK(w.size() == 3);
  CHECK(w.channels == 2);  // the smaller trailing axis
  CHECK(w.length == 5);
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 2; ++c)
      for (int t = 0; t < 5; ++t)
        CHECK(w.window(i)(c, t) == static_cast<float>(i * 100 + t * 10 + c));
  CHECK(w.class_names == std::vector<std::string>{"climb_stairs", "walk"});  // sorted
  CHECK(w.labels == Eigen::Vector3i(1, 0, 1));
  CHECK(w.subject_names == std::vector<std::string>{"f1", "m1"});
  CHECK(w.subjects == Eigen::Vector3i(1, 0, 1));
  CHECK(w.channel_names == std::vector<std::string>{"ch0", "ch1"});
  CHECK(w.sample_rate_hz == 0.0);
  CHECK(contains(w.description, "sample rate unknown"));
  // Forcing the other layout reads the same bytes as N x C x L = 3 x 5 x 2.
  NpyReadOptions o;
  o.layout = NpyLayout::kChannelsFirst;
  o.sample_rate_hz = 30;
  const Windows f = read_windows_npy(d, o);
  CHECK(f.channels == 5);
  CHECK(f.length == 2);
  CHECK(f.sample_rate_hz == 30.0);
  CHECK(f.window(0)(1, 0) == 10.0f);  // flat index 2 = x[0][1][0]
}

TEST_CASE("npy_windows: N x C x L float32, integer labels, 2-D X refused, explicit files") {
  const std::string d = moca::data::test::scratch_dir("npy_ncl");
  std::vector<float> x;
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      for (int t = 0; t < 4; ++t) x.push_back(static_cast<float>(i * 100 + c * 10 + t));
  write_raw_npy(d + "/X.npy", "<f4", "(2, 3, 4)", bytes_of(x));
  write_raw_npy(d + "/y.npy", "<i8", "(2,)", bytes_of(std::vector<std::int64_t>{6, -1}));
  write_raw_npy(d + "/pid.npy", "<i4", "(2,)", bytes_of(std::vector<std::int32_t>{7, 9}));
  const Windows w = read_windows_npy(d);
  CHECK(w.channels == 3);
  CHECK(w.length == 4);
  CHECK(w.window(1)(2, 3) == 123.0f);
  CHECK(w.labels == Eigen::Vector2i(6, -1));
  CHECK(w.subjects == Eigen::Vector2i(7, 9));
  CHECK(w.subject_names.empty());
  // Square trailing axes read as N x C x L.
  write_raw_npy(d + "/sq.npy", "<f4", "(1, 2, 2)", bytes_of(std::vector<float>{1, 2, 3, 4}));
  const Windows sq = read_windows_npy_files(d + "/sq.npy", "", "");
  CHECK(sq.window(0)(0, 1) == 2.0f);
  CHECK(sq.labels(0) == -1);
  CHECK(sq.subjects(0) == -1);
  // 2-D X is refused (issue #10: rank 3 only), with the fix in the message.
  write_raw_npy(d + "/x2.npy", "<f8", "(2, 3)", bytes_of(std::vector<double>{1, 2, 3, 4, 5, 6}));
  CHECK(contains(error_text<std::invalid_argument>(
                     [&] { read_windows_npy_files(d + "/x2.npy", d + "/y.npy", ""); }),
                 "X[:, None, :]"));
  NpyReadOptions names;
  names.channel_names = {"a", "b", "c"};
  CHECK(read_windows_npy(d, names).channel_names == names.channel_names);
}

TEST_CASE("npy_windows: write then read round-trips data and metadata in both layouts") {
  Windows w;
  w.channels = 2;
  w.length = 3;
  w.sample_rate_hz = 50;
  w.channel_names = {"acc_x", "gyro_x"};
  w.class_names = {"transition", "walking", "upstairs"};
  w.subject_names = {"f1", "m2"};
  w.x.resize(4, 6);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) w.x(i, j) = 0.25f * static_cast<float>(i * 6 + j) - 1.0f;
  w.labels = Eigen::Vector4i(2, 0, 1, 2);
  w.subjects = Eigen::Vector4i(0, 1, 1, 0);
  w.description = "round trip";
  for (const auto layout : {NpyLayout::kChannelsFirst, NpyLayout::kChannelsLast}) {
    for (bool strings : {false, true}) {
      const std::string d = moca::data::test::scratch_dir("npy_rt");
      NpyWriteOptions o;
      o.layout = layout;
      o.labels_as_strings = strings;
      o.float64 = strings;
      write_windows_npy(w, d, o);
      const moca::NdArray x = moca::read_npy(d + "/X.npy");
      CHECK(x.shape == (layout == NpyLayout::kChannelsFirst ? std::vector<std::int64_t>{4, 2, 3}
                                                            : std::vector<std::int64_t>{4, 3, 2}));
      CHECK(x.dtype == (strings ? "<f8" : "<f4"));
      CHECK(moca::read_npy(d + "/Y.npy").is_string() == strings);
      const Windows r = read_windows_npy(d);
      CHECK(r.x == w.x);
      CHECK(r.labels == w.labels);  // string labels map back through meta.json's class_names
      CHECK(r.subjects == w.subjects);
      CHECK(r.channel_names == w.channel_names);
      CHECK(r.class_names == w.class_names);
      CHECK(r.subject_names == w.subject_names);
      CHECK(r.sample_rate_hz == 50.0);
      CHECK(r.description == "round trip");
    }
  }
  Windows bad = w;
  bad.labels(0) = 5;
  NpyWriteOptions so;
  so.labels_as_strings = true;
  CHECK(contains(error_text<std::invalid_argument>(
                     [&] { write_windows_npy(bad, moca::data::test::scratch_dir("npy_bad"), so); }),
                 "has no class name"));
  NpyWriteOptions autolayout;
  autolayout.layout = NpyLayout::kAuto;
  CHECK_THROWS_AS(write_windows_npy(w, "/tmp", autolayout), std::invalid_argument);
  CHECK(parse_enum(kNpyLayoutNames, "NLC", "layout") == NpyLayout::kChannelsLast);
  CHECK(parse_enum(kNpyLayoutNames, "ncl", "layout") == NpyLayout::kChannelsFirst);
  CHECK(contains(
      error_text<std::invalid_argument>([] { parse_enum(kNpyLayoutNames, "CLN", "layout"); }),
      "auto, NCL, NLC"));
}

TEST_CASE("npy_windows: malformed inputs name the file") {
  const std::string d = moca::data::test::scratch_dir("npy_errors");
  const std::string x = d + "/X.npy";
  auto reset_x = [&] {
    write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(std::vector<float>(12, 1.0f)));
  };
  auto bad_x = [&](const std::string& expect) {
    const std::string msg =
        error_text<std::invalid_argument>([&] { read_windows_npy_files(x, "", ""); });
    CHECK_MESSAGE(contains(msg, x), msg);
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  moca::data::test::write_text(x, "not a numpy file at all");
  bad_x("bad magic");
  write_raw_npy(x, "<f4", "(2, 2, 3)", bytes_of(std::vector<float>(5, 1.0f)));
  bad_x("truncated");
  write_raw_npy(x, "<f4", "(1, 1, 1, 2)", bytes_of(std::vector<float>(2, 1.0f)));
  bad_x("4 dimensions");
  write_raw_npy(x, "<f4", "(2,)", bytes_of(std::vector<float>(2, 1.0f)));
  bad_x("1 dimensions");
  write_raw_npy(x, "<f4", "(1, 1, 2)", bytes_of(std::vector<float>{1.0f, NAN}));
  bad_x("not finite");
  write_raw_npy(x, "<U1", "(1, 1)", utf32({U"a"}, 1));
  bad_x("must be numeric");
  write_raw_npy(x, "<f4", "(0, 2, 3)", "");
  bad_x("empty");
  write_raw_npy(x, ">f4", "(1, 1, 1)", "abcd");
  bad_x("unsupported dtype");

  reset_x();
  const std::string y = d + "/y.npy";
  auto bad_y = [&](const std::string& expect) {
    const std::string msg =
        error_text<std::invalid_argument>([&] { read_windows_npy_files(x, y, ""); });
    CHECK_MESSAGE(contains(msg, y), msg);
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  write_raw_npy(y, "<i8", "(3,)", bytes_of(std::vector<std::int64_t>{1, 2, 3}));
  bad_y("has 3 entries, X has N = 2");
  write_raw_npy(y, "<f8", "(2,)", bytes_of(std::vector<double>{1.0, 2.5}));
  bad_y("not an integer id");
  write_raw_npy(y, "<i8", "(2,)", bytes_of(std::vector<std::int64_t>{1, -2}));
  bad_y("not an integer id >= -1");
  write_raw_npy(y, "<i8", "(1, 2)", bytes_of(std::vector<std::int64_t>{1, 2}));
  bad_y("1-D array");
  write_raw_npy(y, "<i8", "(2, 2)", bytes_of(std::vector<std::int64_t>{1, 2, 3, 4}));
  bad_y("1-D array");
  const std::string pid = d + "/pid.npy";
  write_raw_npy(pid, "<U2", "(1,)", utf32({U"m1"}, 2));
  CHECK(contains(error_text<std::invalid_argument>([&] { read_windows_npy_files(x, "", pid); }),
                 "subject ids has 1 entries"));
  NpyReadOptions names;
  names.channel_names = {"only-one"};
  CHECK(
      contains(error_text<std::invalid_argument>([&] { read_windows_npy_files(x, "", "", names); }),
               "1 channel names for C = 2"));
  NpyReadOptions rate;
  rate.sample_rate_hz = -1;
  CHECK_THROWS_AS(read_windows_npy_files(x, "", "", rate), std::invalid_argument);
  CHECK_THROWS_AS(read_windows_npy(d + "/missing"), std::runtime_error);
  moca::data::test::write_text(d + "/meta.json", "{not json");
  CHECK(contains(error_text<std::invalid_argument>([&] { read_windows_npy(d); }), "meta.json"));
}
