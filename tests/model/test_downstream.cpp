#include <doctest/doctest.h>

#include <stdexcept>

#include <sstream>

#include "moca/model/downstream.hpp"
#include "test_support.hpp"

using namespace moca::model;

namespace {

moca::data::Windows rows(const moca::data::Windows& w, int from, int to) {
  std::vector<int> r;
  for (int i = from; i < to; ++i) r.push_back(i);
  return w.subset(r);
}

moca::data::Windows accelerometer_only(const moca::data::Windows& w) {
  moca::data::Windows a = w;
  a.channels = 3;
  a.channel_names = {"acc_x", "acc_y", "acc_z"};
  a.x = w.x.leftCols(3 * w.length);
  return a;
}

}  // namespace

TEST_CASE("a linear probe on the pre-trained encoder beats chance on generated data") {
  const auto w = moca_test::small_windows(280, 21);
  const auto train = rows(w, 0, 196), test = rows(w, 196, 280);
  auto o = downstream_defaults(DownstreamMode::kLinearProbe);
  o.checkpoint = moca_test::shared_checkpoint();
  o.epochs = 30;
  o.warmup_epochs = 3;
  o.batch_size = 28;
  o.progress = false;
  o.runtime.threads = 1;
  std::ostringstream log;
  const auto r = train_classifier(o, train, test, log);
  MESSAGE("linear probe accuracy " << r.test.accuracy << " (chance 1/7)");
  CHECK(r.classes == 7);
  CHECK(r.test.n == 84);
  CHECK(r.test.accuracy > 2.0 / 7.0);
  CHECK(r.history.size() == 30);
  CHECK(r.channel_map == "identity");
  // Same seed, same numbers.
  const auto again = train_classifier(o, train, test, log);
  CHECK(again.predicted == r.predicted);
}

TEST_CASE("accelerometer-only data runs through an acc+gyro model") {
  const auto w = accelerometer_only(moca_test::small_windows(80, 22));
  auto o = downstream_defaults(DownstreamMode::kLinearProbe);
  o.checkpoint = moca_test::shared_checkpoint();
  o.epochs = 2;
  o.warmup_epochs = 0;
  o.batch_size = 20;
  o.progress = false;
  std::ostringstream log;
  const auto r = train_classifier(o, rows(w, 0, 60), rows(w, 60, 80), log);
  CHECK(r.channel_map == "acc_x->acc_x acc_y->acc_y acc_z->acc_z");
  CHECK(r.test.n == 20);
}

TEST_CASE("fine-tuning and the from-scratch baseline train the whole network") {
  const auto w = moca_test::small_windows(60, 23);
  for (auto mode : {DownstreamMode::kFinetune, DownstreamMode::kScratch}) {
    auto o = downstream_defaults(mode);
    if (mode == DownstreamMode::kFinetune) o.checkpoint = moca_test::shared_checkpoint();
    o.preset = "cpu-small";
    o.epochs = 2;
    o.warmup_epochs = 1;
    o.batch_size = 20;
    o.progress = false;
    std::ostringstream log;
    const auto r = train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log);
    CHECK(r.history.size() == 2);
    CHECK(r.test.n == 20);
    CHECK(std::isfinite(r.history.back().at("loss").get<double>()));
  }
}

TEST_CASE("classification errors are clear") {
  const auto w = moca_test::small_windows(40, 24);
  std::ostringstream log;
  auto o = downstream_defaults(DownstreamMode::kLinearProbe);
  o.progress = false;
  o.batch_size = 10;
  CHECK_THROWS_WITH_AS(train_classifier(o, w, w, log), doctest::Contains("checkpoint"),
                       std::invalid_argument);
  o.checkpoint = moca_test::temp_path("no-such-checkpoint.pt");
  CHECK_THROWS_AS(train_classifier(o, w, w, log), std::runtime_error);
  o.checkpoint = moca_test::shared_checkpoint();
  auto unlabelled = w;
  unlabelled.labels(3) = -1;
  CHECK_THROWS_WITH_AS(train_classifier(o, unlabelled, w, log), doctest::Contains("no label"),
                       std::invalid_argument);
  auto renamed = w;
  renamed.channel_names[0] = "mag_x";
  CHECK_THROWS_WITH_AS(train_classifier(o, renamed, renamed, log), doctest::Contains("mag_x"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_downstream_mode("probe"), std::invalid_argument);
  auto bad = downstream_defaults(DownstreamMode::kScratch);
  bad.preset = "gigantic";
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("preset"), std::invalid_argument);
}
