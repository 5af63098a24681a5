#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "study_data.hpp"

using moca::sim::StudyDataOptions;

namespace {
StudyDataOptions generator(int n) {
  StudyDataOptions o;
  o.selection.dataset.use_env = false;
  o.samples = n;
  return o;
}
}  // namespace

TEST_CASE("transition_windows from the generator: size, source, determinism") {
  auto o = generator(40);
  const auto a = moca::sim::transition_windows(o);
  CHECK(a.windows.size() == 40);
  CHECK(a.windows.channels == 6);
  CHECK(a.description["source"] == "generator");
  CHECK(a.description["channels"].size() == 6);
  const auto b = moca::sim::transition_windows(o);
  CHECK(a.windows.x == b.windows.x);
  o.seed = 5;
  const auto c = moca::sim::transition_windows(o);
  CHECK(a.windows.x != c.windows.x);
}

TEST_CASE("train_test_windows from the generator: sizes 7:3 and independent parts") {
  const auto s = moca::sim::train_test_windows(generator(70));
  CHECK(s.train.size() == 70);
  CHECK(s.test.size() == 30);
  CHECK(s.train.x.row(0) != s.test.x.row(0));
}

TEST_CASE("a .npy folder: the studies read its windows (no transitions) at the model's rate") {
  const std::string dir = std::string(MOCA_BINARY_DIR) + "/study_data_npy";
  std::filesystem::create_directories(dir);
  std::vector<double> x(30 * 4 * 100);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::cos(0.11 * static_cast<double>(k));
  moca::write_npy(dir + "/X.npy", {30, 4, 100}, x.data());
  std::ofstream(dir + "/meta.json")
      << R"({"modalities": {"a": [0, 1], "b": [2, 3]}, "sample_rate": 25})";
  StudyDataOptions o;
  o.selection.dataset.use_env = false;
  o.selection.data = dir;
  o.samples = 20;
  const auto t = moca::sim::transition_windows(o);
  CHECK(t.windows.size() == 20);   // a seeded subset of the 30 windows, not transitions
  CHECK(t.windows.length == 200);  // 25 -> 50 Hz
  CHECK(t.description["source"] == "npy");
  CHECK(t.description["modalities"] == "a=0-1,b=2-3");
  CHECK(t.windows.modality_channels() == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  o.samples = 30;
  const auto s = moca::sim::train_test_windows(o);
  CHECK(s.train.size() == 21);  // int(0.7 * 30)
  CHECK(s.test.size() == 9);
}

TEST_CASE("HAPT: transitions from the training split and a capped split") {
  const char* dir = std::getenv("MOCA_HAPT_DIR");
  if (dir == nullptr || *dir == '\0') {
    MESSAGE("MOCA_HAPT_DIR not set; skipping the HAPT part");
    return;
  }
  StudyDataOptions o;
  o.selection.data = dir;
  o.samples = 50;
  const auto t = moca::sim::transition_windows(o);
  CHECK(t.windows.size() == 50);
  CHECK(t.description["source"] == "hapt");
  // The random 7:3 split keeps int(0.7 n) windows for training (3796 -> 2657, docs/data.md).
  const int n = t.description["hapt_windows"].get<int>();
  CHECK(t.description["train_windows"].get<int>() == static_cast<int>(0.7 * n));
  o.samples = 70;
  const auto s = moca::sim::train_test_windows(o);
  CHECK(s.train.size() == 70);
  CHECK(s.test.size() == 30);
}

TEST_CASE("StudyDataOptions validation and write_json") {
  auto o = generator(2);
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = generator(10);
  o.selection.coupling = 1.5;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = generator(10);
  o.selection.split_seed = 1ULL << 33;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);

  const std::string path = std::string(MOCA_BINARY_DIR) + "/study_data_test.json";
  moca::sim::write_json(path, {{"a", 1}});
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in)["a"] == 1);
  std::remove(path.c_str());
  CHECK_THROWS_AS(moca::sim::write_json("/nonexistent-dir/x.json", {}), std::runtime_error);
}
