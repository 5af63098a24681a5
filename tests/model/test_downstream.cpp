#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/protocol.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca_test::rows;

namespace {

moca::data::Windows accelerometer_only(const moca::data::Windows& w) {
  moca::data::Windows a = w;
  a.channels = 3;
  a.channel_names = {"acc_x", "acc_y", "acc_z"};
  a.x = w.x.leftCols(3 * w.length);
  return a;
}

/// `mode`'s defaults with a short schedule and no progress bar; linprobe and finetune start from
/// the shared pre-trained checkpoint, scratch from a random cpu-small network.
DownstreamOptions quick_options(DownstreamMode mode, int epochs, double warmup_epochs,
                                int batch_size) {
  auto o = downstream_defaults(mode);
  if (mode != DownstreamMode::kScratch) o.checkpoint = moca_test::shared_checkpoint();
  o.preset = "cpu-small";
  o.epochs = epochs;
  o.warmup_epochs = warmup_epochs;
  o.batch_size = batch_size;
  o.progress = false;
  return o;
}

}  // namespace

TEST_CASE("a linear probe on the pre-trained encoder beats chance on generated data") {
  const auto w = moca_test::small_windows(280, 21);
  const auto train = rows(w, 0, 196), test = rows(w, 196, 280);
  auto o = quick_options(DownstreamMode::kLinearProbe, 30, 3, 28);
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
  const auto o = quick_options(DownstreamMode::kLinearProbe, 2, 0, 20);
  std::ostringstream log;
  const auto r = train_classifier(o, rows(w, 0, 60), rows(w, 60, 80), log);
  CHECK(r.channel_map == "acc_x->acc_x acc_y->acc_y acc_z->acc_z");
  CHECK(r.test.n == 20);
}

TEST_CASE("fine-tuning and the from-scratch baseline train the whole network") {
  const auto w = moca_test::small_windows(60, 23);
  for (auto mode : {DownstreamMode::kFinetune, DownstreamMode::kScratch}) {
    const auto o = quick_options(mode, 2, 1, 20);
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
  CHECK_THROWS_AS(parse_enum(kDownstreamModeNames, "probe", "mode"), std::invalid_argument);
  auto bad = downstream_defaults(DownstreamMode::kScratch);
  bad.preset = "gigantic";
  CHECK_THROWS_WITH_AS(bad.validate(),
                       "DownstreamOptions::preset (gigantic) must be one of: paper-base, tiny, "
                       "cpu-small",
                       std::invalid_argument);
  auto probe = downstream_defaults(DownstreamMode::kLinearProbe);  // no checkpoint
  CHECK_THROWS_WITH_AS(probe.validate(),
                       "DownstreamOptions::checkpoint ('') is required for linprobe (a pre-trained "
                       "MAE)",
                       std::invalid_argument);
}

TEST_CASE("from scratch: the layout and the positional embedding reach the model and the JSON") {
  const auto w = moca_test::small_windows(40, 25);
  auto o = quick_options(DownstreamMode::kScratch, 1, 0, 10);
  CHECK(o.layout == TokenLayout::kModality);
  CHECK(o.pos_embed == PosEmbedKind::kSinCos2d);
  CHECK(o.to_json().at("layout") == "modality");
  CHECK(o.to_json().at("pos_embed") == "2d");
  o.runtime.threads = 1;
  std::ostringstream log;
  auto first_loss = [&] {
    return train_classifier(o, rows(w, 0, 30), rows(w, 30, 40), log).history.at(0).at("loss");
  };
  const auto base = first_loss();
  // Each choice builds another network, so the same seed gives another first-epoch loss.
  o.pos_embed = PosEmbedKind::kSinCos1d;
  CHECK(o.to_json().at("pos_embed") == "1d");
  CHECK(first_loss() != base);
  o.pos_embed = PosEmbedKind::kSinCos2d;
  o.layout = TokenLayout::kStacked;
  CHECK(o.to_json().at("layout") == "stacked");
  CHECK(first_loss() != base);
}

TEST_CASE("moca finetune: --layout and --pos-embed are parsed at the flags, before the data") {
  const char* dir = std::getenv("MOCA_BIN_DIR");
  const std::string moca = std::string(dir != nullptr ? dir : MOCA_BINARY_DIR "/bin") + "/moca";
  const std::string err = moca_test::temp_path("finetune_flags.err");
  auto run = [&](const std::string& flags) {
    const std::string cmd = moca + " finetune --from-scratch --data npy:/nonexistent-moca-data " +
                            flags + " >/dev/null 2>" + err;
    const int s = std::system(cmd.c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return std::make_pair(WIFEXITED(s) ? WEXITSTATUS(s) : -1, text.str());
  };
  auto r = run("--layout bogus");
  CHECK(r.first == 2);
  CHECK(r.second == "moca: --layout (bogus) must be one of: modality, stacked\n");
  r = run("--pos-embed 3d");
  CHECK(r.first == 2);
  CHECK(r.second == "moca: --pos-embed (3d) must be one of: 2d, 1d\n");
  r = run("--scratch-init xavier");
  CHECK(r.first == 2);
  CHECK(r.second == "moca: --scratch-init (xavier) must be one of: mae, timm\n");
  // timm learns the table: --pos-embed would take no effect beside it.
  r = run("--scratch-init timm --pos-embed 1d");
  CHECK(r.first == 2);
  CHECK(r.second.find("--pos-embed (1d) takes no effect: timm's initialisation") !=
        std::string::npos);
  // Valid names pass the flags; the run then stops at the missing data.
  r = run("--scratch-init timm");
  CHECK(r.first != 0);
  CHECK(r.second.find("nonexistent-moca-data") != std::string::npos);
  r = run("--layout stacked --pos-embed 1d");
  CHECK(r.first != 0);
  CHECK(r.second.find("nonexistent-moca-data") != std::string::npos);
}

namespace {
// The rows of ProtocolOptions' schema (with DownstreamOptions'), as key, flag, scope.
struct RowList {
  std::vector<moca::Option>* rows;
  template <class T>
  void operator()(const T&, const moca::Option& r) const {
    rows->push_back(r);
  }
  template <class T, class E, std::size_t N>
  void operator()(const T&, const moca::Option& r, const moca::EnumName<E> (&)[N]) const {
    rows->push_back(r);
  }
};
}  // namespace

TEST_CASE("the protocol's schema: one row per key and flag; every range is enforced") {
  std::vector<moca::Option> rows;
  const ProtocolOptions defaults;
  ProtocolOptions::schema(defaults, RowList{&rows});
  std::set<std::string> keys, flags;
  for (const moca::Option& r : rows) {
    CHECK_MESSAGE(keys.insert(r.key).second, r.key);
    CHECK_MESSAGE(flags.insert(r.flag).second, r.flag);
    CHECK(r.scope != 0);
    CHECK(std::string(r.help).size() > 3);
  }
  CHECK(rows.size() == 27);  // 26 + --train-pos-embed (issue 40)
  // each mode's defaults pass the rows' ranges (and validate, given a checkpoint)
  for (DownstreamMode m :
       {DownstreamMode::kLinearProbe, DownstreamMode::kFinetune, DownstreamMode::kScratch}) {
    ProtocolOptions o;
    o.downstream = downstream_defaults(m);
    o.downstream.checkpoint = m == DownstreamMode::kScratch ? "" : "m.pt";
    CHECK_NOTHROW(o.validate());
  }
  // one value outside each ranged row is refused, naming that row's field (Owner::key)
  ProtocolOptions o;
  o.downstream.checkpoint = "m.pt";
  const std::pair<double*, const char*> doubles[] = {
      {&o.train_fraction, "ProtocolOptions::train_fraction (1)"},
      {&o.label_fraction, "ProtocolOptions::label_fraction (1.5)"},
      {&o.downstream.layer_decay, "DownstreamOptions::layer_decay (0)"},
      {&o.downstream.label_smoothing, "DownstreamOptions::label_smoothing (1)"},
      {&o.downstream.drop_path, "DownstreamOptions::drop_path (-0.1)"}};
  const double bad[] = {1.0, 1.5, 0.0, 1.0, -0.1};
  for (size_t i = 0; i < std::size(doubles); ++i) {
    const double saved = *doubles[i].first;
    *doubles[i].first = bad[i];
    CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains(doubles[i].second), std::invalid_argument);
    *doubles[i].first = saved;
  }
  o.folds = 1;
  CHECK_THROWS_WITH_AS(o.validate(), "ProtocolOptions::folds (1) must be >= 2",
                       std::invalid_argument);
  o.folds = 2;
  CHECK_NOTHROW(o.validate());  // control: the same options, in range
  CHECK(mode_scope(DownstreamMode::kFinetune) == kFinetuneScope);
}
