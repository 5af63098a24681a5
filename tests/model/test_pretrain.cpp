#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fstream>
#include <sstream>

#include "moca/data/mapped_npy.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/train/pretrain.hpp"
#include "test_support.hpp"

using namespace moca::model;

namespace {

PretrainOptions quick(const std::string& name) {
  PretrainOptions o;
  o.preset = "cpu-small";
  o.epochs = 3;
  o.batch_size = 8;
  o.warmup_epochs = 1;
  o.checkpoint = moca_test::temp_path(name);
  o.checkpoint_every = 1;
  o.progress = false;
  o.seed = 11;
  o.runtime.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("the training record names the enum options") {
  PretrainOptions o;
  auto j = o.training_json();
  CHECK(j.at("layout") == "modality");
  CHECK(j.at("pos_embed") == "2d");
  CHECK(j.at("loss") == "all");
  o.layout = TokenLayout::kStacked;
  o.pos_embed = PosEmbedKind::kSinCos1d;
  o.loss = LossScope::kMasked;
  j = o.training_json();
  CHECK(j.at("layout") == "stacked");
  CHECK(j.at("pos_embed") == "1d");
  CHECK(j.at("loss") == "masked");
  // The names parse back (the command line and checkpoints use the same table).
  CHECK(parse_enum(kTokenLayoutNames, j.at("layout"), "layout") == TokenLayout::kStacked);
  CHECK(parse_enum(kPosEmbedNames, j.at("pos_embed"), "pos_embed") == PosEmbedKind::kSinCos1d);
  CHECK(parse_enum(kLossScopeNames, j.at("loss"), "loss") == LossScope::kMasked);
  CHECK_THROWS_WITH_AS(parse_enum(kTokenLayoutNames, "diagonal", "layout"),
                       doctest::Contains("layout (diagonal) must be one of: modality, stacked"),
                       std::invalid_argument);
}

TEST_CASE("pre-training writes checkpoints and JSON-lines metrics; the loss goes down") {
  const auto w = moca_test::small_windows(40, 2);
  std::ostringstream log;
  auto o = quick("pre_basic.pt");
  o.epochs = 4;
  o.lr = 1e-3;
  const auto r = pretrain(o, w, log);
  CHECK(r.finished);
  CHECK(r.iterations == 4 * 5);
  REQUIRE(r.history.size() == 4);
  CHECK(r.history.back().loss < r.history.front().loss);
  std::ifstream metrics(o.metrics_path());
  int lines = 0;
  for (std::string line; std::getline(metrics, line);) {
    const auto j = nlohmann::json::parse(line);
    CHECK(j.at("epoch") == lines);
    ++lines;
  }
  CHECK(lines == 4);
  const auto info = read_checkpoint_info(o.checkpoint);
  CHECK(info.kind == "mae");
  CHECK(info.meta.at("finished") == true);
  CHECK(info.meta.at("policy_spec") == "cross:ratio=0.75,count=keep-floor");
  CHECK(info.channel_names[3] == "gyro_x");
}

TEST_CASE("bf16 mixed precision trains: finite, decreasing loss, not the fp32 numbers") {
  const auto w = moca_test::small_windows(40, 2);
  std::ostringstream log;
  auto fp32 = quick("pre_fp32.pt");
  fp32.epochs = 4;
  fp32.lr = 1e-3;
  auto bf16 = fp32;
  bf16.checkpoint = moca_test::temp_path("pre_bf16.pt");
  bf16.runtime.precision = Precision::kBf16;
  const auto a = pretrain(fp32, w, log), b = pretrain(bf16, w, log);
  REQUIRE(b.history.size() == 4);
  CHECK(std::isfinite(b.history.back().loss));
  CHECK(b.history.back().loss < b.history.front().loss);
  // Autocast really changed the arithmetic, but not the outcome by much.
  CHECK(b.history.back().loss != a.history.back().loss);
  CHECK(std::abs(b.history.back().loss - a.history.back().loss) <
        0.1 * a.history.back().loss + 0.05);
  CHECK_THROWS_WITH_AS(parse_enum(kPrecisionNames, "fp16", "RuntimeOptions::precision"),
                       "RuntimeOptions::precision (fp16) must be one of: fp32, bf16",
                       std::invalid_argument);
}

TEST_CASE("a resumed run equals the uninterrupted run bit for bit") {
  const auto w = moca_test::small_windows(40, 3);
  std::ostringstream log;
  auto full = quick("pre_full.pt");
  full.augment = true;  // exercise the augmentation stream too
  const auto a = pretrain(full, w, log);
  REQUIRE(a.finished);

  auto part = quick("pre_part.pt");
  part.augment = true;
  part.stop_after_iterations = 7;  // mid-epoch 2 (5 iterations per epoch)
  const auto b1 = pretrain(part, w, log);
  CHECK(b1.interrupted);
  CHECK(b1.iterations == 7);
  part.stop_after_iterations = -1;
  part.resume = true;
  const auto b2 = pretrain(part, w, log);
  CHECK(b2.finished);
  CHECK(b2.iterations == a.iterations);
  REQUIRE(b2.history.size() == a.history.size());
  for (size_t e = 0; e < a.history.size(); ++e) CHECK(b2.history[e].loss == a.history[e].loss);
  std::string why;
  CHECK_MESSAGE(moca_test::same_model_parameters(full.checkpoint, part.checkpoint, why), why);

  // Resuming with other training options is refused, naming the option.
  auto other = part;
  other.lr = 1e-3;
  CHECK_THROWS_WITH_AS(pretrain(other, w, log), doctest::Contains("lr"), std::invalid_argument);
  // ... and so is resuming on other data.
  CHECK_THROWS_WITH_AS(pretrain(part, moca_test::small_windows(48, 3), log),
                       doctest::Contains("different data"), std::invalid_argument);
}

TEST_CASE("a stop request ends the run with a resumable checkpoint") {
  const auto w = moca_test::small_windows(24, 4);
  std::ostringstream log;
  auto o = quick("pre_stop.pt");
  std::atomic<bool> stop{true};
  const auto r = pretrain(o, w, log, &stop);
  CHECK(r.interrupted);
  CHECK(r.iterations == 1);
  CHECK(read_checkpoint_info(o.checkpoint).meta.at("iteration") == 1);
  CHECK(log.str().find("--resume") != std::string::npos);
}

TEST_CASE("a stop request at an epoch's last step keeps that epoch's record") {
  // One iteration per epoch: the stop comes at the last step of epoch 1, which is recorded
  // before the run stops (the trainer before issue #16 left it out of the history and added its
  // loss to the next epoch's record after a resume).
  const auto w = moca_test::small_windows(8, 7);
  std::ostringstream log;
  auto full = quick("pre_stop_edge_full.pt");
  const auto a = pretrain(full, w, log);
  REQUIRE(a.history.size() == 3);
  auto o = quick("pre_stop_edge.pt");
  std::atomic<bool> stop{true};
  const auto r = pretrain(o, w, log, &stop);
  CHECK(r.interrupted);
  CHECK(r.iterations == 1);
  REQUIRE(r.history.size() == 1);
  CHECK(r.history[0].loss == a.history[0].loss);
  CHECK(log.str().find("interrupted after epoch 1") != std::string::npos);
  o.resume = true;
  const auto b = pretrain(o, w, log);
  CHECK(b.finished);
  REQUIRE(b.history.size() == 3);
  for (size_t e = 0; e < 3; ++e) CHECK(b.history[e].loss == a.history[e].loss);
}

TEST_CASE("invalid pre-training options and data are rejected") {
  const auto w = moca_test::small_windows(16, 5);
  std::ostringstream log;
  auto o = quick("pre_bad.pt");
  o.preset = "enormous";
  CHECK_THROWS_WITH_AS(pretrain(o, w, log), doctest::Contains("preset"), std::invalid_argument);
  o = quick("pre_bad.pt");
  o.batch_size = 17;
  CHECK_THROWS_WITH_AS(pretrain(o, w, log), doctest::Contains("batch_size"), std::invalid_argument);
  o = quick("pre_bad.pt");
  o.policy = "diagonal:ratio=0.5";
  CHECK_THROWS_AS(pretrain(o, w, log), std::invalid_argument);
  o = quick("pre_bad.pt");
  o.layout = TokenLayout::kStacked;  // cross masks split time columns
  CHECK_THROWS_WITH_AS(pretrain(o, w, log), doctest::Contains("stacked"), std::invalid_argument);
  o = quick("pre_bad.pt");
  o.patch_length = 30;
  CHECK_THROWS_AS(pretrain(o, w, log), std::invalid_argument);
  o = quick("pre_bad.pt");
  o.warmup_epochs = 3;
  CHECK_THROWS_WITH_AS(pretrain(o, w, log), doctest::Contains("warmup"), std::invalid_argument);
  o = quick("pre_missing.pt");
  o.resume = true;
  CHECK_THROWS_AS(pretrain(o, w, log), std::runtime_error);
}

TEST_CASE("the stacked layout trains with time-synchronous masks") {
  const auto w = moca_test::small_windows(16, 6);
  std::ostringstream log;
  auto o = quick("pre_stacked.pt");
  o.layout = TokenLayout::kStacked;
  o.policy = "sync:ratio=0.5";
  o.epochs = 2;
  const auto r = pretrain(o, w, log);
  CHECK(r.finished);
  CHECK(read_checkpoint_info(o.checkpoint).model.tokens() == 10);
}

namespace moca_test {

const std::string& shared_checkpoint() {
  static const std::string path = [] {
    PretrainOptions o;
    o.preset = "cpu-small";
    o.epochs = 6;
    o.batch_size = 20;
    o.warmup_epochs = 1;
    o.lr = 1e-3;
    o.checkpoint = temp_path("shared.pt");
    o.checkpoint_every = 100;
    o.progress = false;
    o.seed = 9;
    o.runtime.threads = 1;
    std::ostringstream log;
    pretrain(o, small_windows(140, 9), log);
    return o.checkpoint;
  }();
  return path;
}

}  // namespace moca_test

TEST_CASE("streamed from a mapped folder: the whole set as one block is the in-memory run") {
  const auto w = moca_test::small_windows(40, 3);
  const std::string dir = moca_test::temp_path("stream_same");
  std::filesystem::create_directories(dir);
  moca::data::write_windows_npy(w, dir, {});
  const moca::data::MappedNpySource map(dir);
  std::ostringstream log;
  auto mem = quick("stream_mem.pt");
  mem.augment = true;  // splice partners are read from the source too
  auto disk = quick("stream_disk.pt");
  disk.augment = true;
  disk.shuffle_block = 1000;  // one block: the full shuffle
  const auto a = pretrain(mem, w, log);
  const auto b = pretrain(disk, map, log);
  REQUIRE(b.finished);
  for (size_t e = 0; e < a.history.size(); ++e) CHECK(b.history[e].loss == a.history[e].loss);
  std::string why;
  CHECK_MESSAGE(moca_test::same_model_parameters(mem.checkpoint, disk.checkpoint, why), why);
  // Every step read its 8 windows plus one splice partner each.
  CHECK(b.windows_read == 3 * 5 * (8 + 8));
  CHECK(b.bytes_read == b.windows_read * w.channels * w.length * 4);
  CHECK(b.history[0].read_windows == 5 * 16);
  CHECK(b.storage.find("memory-mapped") != std::string::npos);
  // Control: the auto block (256 > 40 windows: still one block) with another pool is the same;
  // a block of 4 is another order, other numbers.
  auto blocks = quick("stream_blocks.pt");
  blocks.augment = true;
  blocks.shuffle_block = 4;
  pretrain(blocks, map, log);
  CHECK_FALSE(moca_test::same_model_parameters(mem.checkpoint, blocks.checkpoint, why));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a streamed run with a block shuffle resumes mid-epoch bit for bit") {
  const auto w = moca_test::small_windows(60, 4);
  const std::string dir = moca_test::temp_path("stream_resume");
  std::filesystem::create_directories(dir);
  const moca::data::InMemorySource mem(w);
  moca::data::ShardWriteOptions so;
  so.shard_bytes = 25 * static_cast<std::int64_t>(w.channels) * w.length * 2;
  so.float16 = true;  // three shards of float16
  REQUIRE(moca::data::write_npy_shards(mem, dir, so).size() == 3);
  const moca::data::MappedNpySource map(dir);
  std::ostringstream log;
  auto full = quick("stream_full.pt");
  full.shuffle_block = 5;
  full.shuffle_pool = 2;
  full.augment = true;
  const auto a = pretrain(full, map, log);
  REQUIRE(a.finished);
  auto part = full;
  part.checkpoint = moca_test::temp_path("stream_part.pt");
  part.stop_after_iterations = 9;  // mid-epoch 2 (7 iterations per epoch)
  CHECK(pretrain(part, map, log).interrupted);
  part.stop_after_iterations = -1;
  part.resume = true;
  const auto b = pretrain(part, map, log);
  CHECK(b.finished);
  for (size_t e = 0; e < a.history.size(); ++e) CHECK(b.history[e].loss == a.history[e].loss);
  std::string why;
  CHECK_MESSAGE(moca_test::same_model_parameters(full.checkpoint, part.checkpoint, why), why);
  // The checkpoint records the shuffle; resuming on a changed folder is refused.
  const auto meta = moca::model::read_checkpoint_info(part.checkpoint).meta;
  CHECK(meta.at("training").at("shuffle").at("block") == 5);
  struct timespec later[2] = {{0, UTIME_OMIT}, {4000000000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (dir + "/X_001.npy").c_str(), later, 0) == 0);
  const moca::data::MappedNpySource changed(dir);
  CHECK_THROWS_WITH_AS(pretrain(part, changed, log), doctest::Contains("different data"),
                       std::invalid_argument);
  // ... and the storage is checked at every epoch's start: a change stops the run there.
  struct ChangesAfterEpoch1 final : moca::data::WindowSource {
    const moca::data::WindowSource& base;
    mutable int checks = 0;
    explicit ChangesAfterEpoch1(const moca::data::WindowSource& b) : base(b) {}
    const moca::data::Windows& meta() const override { return base.meta(); }
    void read(const int* rows, int count, float* out) const override {
      base.read(rows, count, out);
    }
    std::string identity() const override { return base.identity(); }
    std::string storage_text() const override { return "test"; }
    void check_unchanged() const override {
      if (++checks == 2) throw std::runtime_error("X_001.npy changed while it was read");
    }
  } changing(changed);
  auto during = quick("stream_during.pt");
  CHECK_THROWS_WITH_AS(pretrain(during, changing, log), doctest::Contains("X_001.npy changed"),
                       std::runtime_error);
  CHECK(changing.checks == 2);
  std::filesystem::remove_all(dir);
}
