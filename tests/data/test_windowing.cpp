#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "moca/data/windowing.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

namespace {

// A window of runs: {{id, count}, ...}.
std::vector<int> runs(std::initializer_list<std::pair<int, int>> parts) {
  std::vector<int> v;
  for (const auto& [id, n] : parts) v.insert(v.end(), static_cast<size_t>(n), id);
  return v;
}

int cls(const std::vector<int>& ids, int t = 60) {
  return window_class(ids.data(), static_cast<int>(ids.size()), t);
}

WindowingOptions small_options() {
  WindowingOptions o;
  o.length = 20;
  o.stride = 20;
  o.transition_min_samples = 6;
  return o;
}

}  // namespace

TEST_CASE("windowing: the 7-class label rule on hand-built windows (L = 200, T = 60)") {
  CHECK(cls(runs({{1, 200}})) == 1);
  CHECK(cls(runs({{6, 200}})) == 6);
  CHECK(cls(runs({{4, 140}, {5, 60}})) == 4);           // 60 is not > 60: majority
  CHECK(cls(runs({{4, 139}, {5, 61}})) == 0);           // both > 60: transition
  CHECK(cls(runs({{5, 61}, {4, 139}})) == 0);           // order does not matter
  CHECK(cls(runs({{1, 100}, {2, 100}})) == 0);          // two activities, 2 s each
  CHECK(cls(runs({{5, 150}, {7, 50}})) == 5);           // short postural transition: majority
  CHECK(cls(runs({{8, 150}, {4, 50}})) == 0);           // mostly a postural transition
  CHECK(cls(runs({{7, 50}, {8, 50}, {5, 100}})) == 5);  // plurality 5, only it covers > 60
  CHECK(cls(runs({{12, 200}})) == 0);                   // all postural transition
  CHECK(cls(runs({{3, 70}, {2, 70}, {1, 60}})) == 0);   // three ids, two cover > 60
  CHECK(cls(runs({{1, 40}, {2, 40}, {3, 40}, {4, 40}, {5, 40}})) == 1);  // tie: smallest id
  CHECK(cls(runs({{6, 100}, {3, 100}}), 100) == 3);  // T = 100: tie broken to smaller id
  CHECK(cls(runs({{6, 99}, {3, 101}}), 100) == 3);
  CHECK(cls(runs({{2, 1}}), 0) == 2);
  CHECK(cls(runs({{2, 1}, {3, 1}}), 0) == 0);  // T = 0: any two ids -> transition
  const auto with0 = runs({{1, 10}, {0, 1}});
  CHECK_THROWS_AS(cls(with0), std::invalid_argument);
  const auto with13 = runs({{13, 3}});
  CHECK_THROWS_AS(cls(with13), std::invalid_argument);
  CHECK_THROWS_AS(window_class(with13.data(), 0, 0), std::invalid_argument);
}

TEST_CASE("windowing: fixture windows, worked out by hand (L = 20, stride 20, T = 6)") {
  const Windows w = load_hapt_windows(moca::data::test::fixture_dir() + "/hapt", small_options());
  REQUIRE(w.size() == 12);
  // exp1 stretch samples 10..99: [10,30) 5, [30,50) 5, [50,70) 7|4 -> 0, [70,90) 4;
  // exp2 stretches 0..39 and 45..99: 1 1 | 2 2; exp3 0..79: 6, 6|10 -> 0, 10(5)|4(15) -> 4, 4.
  const std::vector<int> expect = {5, 5, 0, 4, 1, 1, 2, 2, 6, 0, 4, 4};
  const std::vector<int> subj = {1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2};
  for (int i = 0; i < 12; ++i) {
    CHECK(w.labels(i) == expect[static_cast<size_t>(i)]);
    CHECK(w.subjects(i) == subj[static_cast<size_t>(i)]);
  }
  CHECK(w.channels == 6);
  CHECK(w.length == 20);
  CHECK(w.channel_names == hapt_channel_names());
  CHECK(w.class_names == har_class_names());
  CHECK(w.sample_rate_hz == 50.0);
  w.validate("test");
  // Window 0 = exp1 rows 11..30 (acc_x = row/100, gyro_x = -row/100); window 6 starts at row 46.
  for (int t = 0; t < 20; ++t) {
    CHECK(std::abs(w.window(0)(0, t) - (11 + t) / 100.0f) < 1e-6f);
    CHECK(std::abs(w.window(0)(3, t) + (11 + t) / 100.0f) < 1e-6f);
    CHECK(std::abs(w.window(6)(0, t) - (46 + t) / 100.0f) < 1e-6f);
    CHECK(std::abs(w.window(11)(1, t) - 3.0f) < 1e-6f);  // acc_y = experiment
  }
  const auto counts = class_counts(w);
  CHECK(counts == std::vector<long>{2, 2, 2, 0, 3, 2, 1});
  const std::string table = class_count_table(w);
  CHECK_MESSAGE(contains(table, "transition"), table);
  CHECK_MESSAGE(contains(table, "12  (2 subjects)"), table);
  CHECK_FALSE(contains(table, "unlabelled"));
  Windows some = w;
  some.labels(0) = -1;
  const std::string t2 = class_count_table(some);
  CHECK_MESSAGE(contains(t2, "(unlabelled)"), t2);
  CHECK_MESSAGE(contains(t2, "11  (2 subjects)"), t2);
  // subject -1 is no subject: one id left (windows of subject -1 still counted by class)
  Windows unknown = w;
  for (int i = 0; i < unknown.size(); ++i)
    if (unknown.subjects(i) != unknown.subjects(0)) unknown.subjects(i) = -1;
  const std::string t3 = class_count_table(unknown);
  CHECK_MESSAGE(contains(t3, "12  (1 subjects)"), t3);
  CHECK(class_counts(some)[5] == 1);
}

TEST_CASE("windowing: stride, stride 0, dropping transitions") {
  const std::string dir = moca::data::test::fixture_dir() + "/hapt";
  auto o = small_options();
  o.stride = 10;  // stretches of 90, 40, 55, 80 samples: 8 + 3 + 4 + 7 windows
  CHECK(load_hapt_windows(dir, o).size() == 22);
  o.stride = 0;  // = length
  CHECK(load_hapt_windows(dir, o).size() == 12);
  o.drop_transitions = true;
  const Windows w = load_hapt_windows(dir, o);
  CHECK(w.size() == 10);
  CHECK((w.labels.array() != 0).all());
  o = small_options();
  o.length = 60;  // only stretches >= 60: exp1 (90) -> 1, exp3 (80) -> 1
  o.stride = 0;
  const Windows big = load_hapt_windows(dir, o);
  REQUIRE(big.size() == 2);
  CHECK(big.labels(0) == 0);  // rows 11..70: 5 x40, 7 x10, 4 x10 -> two ids > 6
  CHECK(big.labels(1) == 0);  // exp3 rows 1..60: 6 x30, 10 x15, 4 x15
}

TEST_CASE("windowing: option validation and bad recordings") {
  WindowingOptions o;
  o.length = 0;
  CHECK(contains(error_text<std::invalid_argument>([&] { o.validate(); }), "length (0)"));
  o = {};
  o.stride = -1;
  CHECK(contains(error_text<std::invalid_argument>([&] { o.validate(); }), "stride (-1)"));
  o = {};
  o.transition_min_samples = 200;
  CHECK(contains(error_text<std::invalid_argument>([&] { o.validate(); }),
                 "transition_min_samples (200)"));
  o.transition_min_samples = -1;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  CHECK_THROWS_AS(make_windows({}, WindowingOptions{}), std::invalid_argument);
  Recording a;
  a.signal = RowMatrixXf::Zero(6, 300);
  a.sample_labels = Eigen::VectorXi::Constant(300, 1);
  Recording b = a;
  b.signal = RowMatrixXf::Zero(3, 300);
  CHECK_THROWS_AS(make_windows({a, b}, WindowingOptions{}), std::invalid_argument);
  b = a;
  b.sample_labels = Eigen::VectorXi::Constant(10, 1);
  CHECK_THROWS_AS(make_windows({a, b}, WindowingOptions{}), std::invalid_argument);
  CHECK(make_windows({a}, WindowingOptions{}).size() == 1);
}

TEST_CASE("windowing: real HAPT class counts (MOCA_HAPT_DIR)") {
  const std::string dir = moca::data::test::env_dir("MOCA_HAPT_DIR");
  if (dir.empty()) {
    MESSAGE("MOCA_HAPT_DIR unset or missing: real-data windowing test skipped");
    return;
  }
  const Windows w = load_hapt_windows(dir);
  MESSAGE("real HAPT windows (L=200, stride 200):\n" << class_count_table(w));
  CHECK(class_counts(w) == std::vector<long>({443, 545, 508, 441, 581, 646, 632}));
  std::set<int> subjects(w.subjects.data(), w.subjects.data() + w.size());
  CHECK(subjects.size() == 30);
  w.validate("real");
}
