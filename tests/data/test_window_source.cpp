// Window sources (window_source.hpp) and the memory-mapped .npy folder (mapped_npy.hpp): the
// block shuffle's rules and how close it comes to a full shuffle, maps that read what the
// in-memory reader reads (float32 and float16, NCL and NLC, one file or shards), the shard
// writer, and each refusal of a folder that disagrees with itself.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/resample.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/window_source.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace moca::data;
using moca::data::test::bytes_of;
using moca::data::test::scratch_dir;
using moca::data::test::write_raw_npy;

namespace {

Windows small_set(int n, std::uint64_t seed = 3) {
  SyntheticOptions so;
  so.windows = n;
  so.length = 40;
  so.subjects = 5;
  so.seed = seed;
  Windows w = generate_synthetic(so);
  w.parts.resize(n);
  for (int i = 0; i < n; ++i) w.parts(i) = i % 4 == 3 ? Windows::kTestPart : Windows::kTrainPart;
  return w;
}

std::vector<int> iota_rows(int n) {
  std::vector<int> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

RowMatrixXf read_all(const WindowSource& s) {
  RowMatrixXf x(s.size(), s.row_size());
  const auto rows = iota_rows(s.size());
  s.read(rows.data(), s.size(), x.data());
  return x;
}

/// Mean total-variation distance between each batch's label histogram and the whole set's,
/// for labels sorted into `classes` contiguous runs (the worst case for a block shuffle).
double batch_label_distance(const std::vector<int>& order, int classes, int per_class, int batch) {
  double sum = 0;
  int batches = 0;
  for (size_t b = 0; b + static_cast<size_t>(batch) <= order.size();
       b += static_cast<size_t>(batch)) {
    std::vector<int> count(static_cast<size_t>(classes), 0);
    for (int k = 0; k < batch; ++k) ++count[static_cast<size_t>(order[b + k] / per_class)];
    double tv = 0;
    for (const int c : count) tv += std::abs(static_cast<double>(c) / batch - 1.0 / classes);
    sum += tv / 2;
    ++batches;
  }
  return sum / batches;
}

}  // namespace

TEST_CASE("block shuffle: a permutation, seeded, blocks within runs; block 0 is the full shuffle") {
  StorageLayout layout;
  layout.order = iota_rows(1000);
  layout.runs = {300, 300, 400};
  for (const int block : {0, 1, 7, 64, 5000}) {
    for (const int pool : {1, 3, 100}) {
      CAPTURE(block);
      CAPTURE(pool);
      const auto order = block_shuffle_order(layout, block, pool, 11);
      std::vector<int> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      CHECK(sorted == iota_rows(1000));                              // every window once
      CHECK(order == block_shuffle_order(layout, block, pool, 11));  // same seed, same order
      CHECK(order != block_shuffle_order(layout, block, pool, 12));
    }
  }
  // Block 0: the Fisher-Yates shuffle of Rng(seed), worked out here with std::swap.
  std::vector<int> want = iota_rows(1000);
  moca::Rng rng(11);
  for (int i = 999; i > 0; --i) {
    std::swap(want[static_cast<size_t>(i)],
              want[static_cast<size_t>(moca::uniform_int(rng, 0, i))]);
  }
  CHECK(block_shuffle_order(layout, 0, 64, 11) == want);
  // Pool 1: each block's rows come together, stored consecutively, inside one run.
  const int block = 64;
  const auto order = block_shuffle_order(layout, block, 1, 5);
  size_t at = 0;
  int blocks = 0;
  while (at < order.size()) {
    const int lo = *std::min_element(order.begin() + static_cast<long>(at),
                                     order.begin() + static_cast<long>(at) + 1);
    const int run_start = lo < 300 ? 0 : lo < 600 ? 300 : 600;
    const int start = run_start + (lo - run_start) / block * block;
    const int end = std::min(start + block, run_start + (run_start == 600 ? 400 : 300));
    std::set<int> got(order.begin() + static_cast<long>(at),
                      order.begin() + static_cast<long>(at) + (end - start));
    CHECK(got.size() == static_cast<size_t>(end - start));
    CHECK(*got.begin() == start);
    CHECK(*got.rbegin() == end - 1);
    at += static_cast<size_t>(end - start);
    ++blocks;
  }
  CHECK(blocks == 5 + 5 + 7);  // ceil(300/64) twice, ceil(400/64)
  CHECK_THROWS_AS(block_shuffle_order(layout, -1, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(block_shuffle_order(layout, 8, 0, 0), std::invalid_argument);
  layout.runs = {10};
  CHECK_THROWS_AS(block_shuffle_order(layout, 8, 1, 0), std::invalid_argument);
}

TEST_CASE("block shuffle against a full shuffle: batches of data sorted by class") {
  // 10 classes of 20,000 windows stored class by class (the worst case), batches of 64. A
  // full shuffle's batches differ from the class mix by sampling noise alone. A pool's class
  // mix varies too (it holds `pool` blocks, of one class each here), so a batch's deviation
  // grows as sqrt(1 + batch / pool): 1.03x for pools of 1024 blocks, 1.41x for pools of 64.
  // Without pooling a batch is two blocks of one or two classes (the control).
  const int classes = 10, per = 20000, batch = 64;
  StorageLayout layout;
  layout.order = iota_rows(classes * per);
  layout.runs = {classes * per};
  double full = 0, pooled = 0, few = 0, single = 0;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    full += batch_label_distance(block_shuffle_order(layout, 0, 1, seed), classes, per, batch);
    pooled +=
        batch_label_distance(block_shuffle_order(layout, 32, 1024, seed), classes, per, batch);
    few += batch_label_distance(block_shuffle_order(layout, 32, 64, seed), classes, per, batch);
    single += batch_label_distance(block_shuffle_order(layout, 32, 1, seed), classes, per, batch);
  }
  MESSAGE("mean TV distance of a batch's classes from the whole set's: full shuffle "
          << full / 3 << ", blocks of 32 in pools of 1024 " << pooled / 3 << ", pools of 64 "
          << few / 3 << ", no pooling " << single / 3);
  CHECK(pooled < 1.1 * full);
  CHECK(few > 1.25 * full);
  CHECK(few < 1.6 * full);
  CHECK(single > 3 * full);
}

TEST_CASE("in-memory and subset sources read what Windows holds") {
  const Windows w = small_set(50);
  const InMemorySource mem(w);
  CHECK(mem.size() == 50);
  CHECK(mem.meta().x.rows() == 0);
  CHECK(read_all(mem) == w.x);
  CHECK(mem.identity() == fingerprint(w));
  const std::vector<int> rows = {7, 3, 49, 3};
  const SubsetSource sub(mem, rows);
  const Windows want = w.subset(rows);
  CHECK(read_all(sub) == want.x);
  CHECK(sub.meta().labels == want.labels);
  CHECK(sub.meta().subjects == want.subjects);
  CHECK(sub.meta().parts == want.parts);
  CHECK(materialize(sub).x == want.x);
  // Storage order: by base row.
  CHECK(sub.storage().order == std::vector<int>{1, 3, 0, 2});
  CHECK(sub.counters().windows == 4 + 4);
  const int bad = 50;
  float out[6 * 40];
  CHECK_THROWS_AS(mem.read(&bad, 1, out), std::out_of_range);
  CHECK_THROWS_AS(SubsetSource(mem, {50}), std::invalid_argument);
}

TEST_CASE("for_each_chunk: a source on disk in chunks, in row order; memory in one call") {
  const Windows w = small_set(50);
  const InMemorySource mem(w);
  int calls = 0;
  for_each_chunk(mem, 7, [&](int first, const Windows& c) {
    ++calls;
    CHECK(first == 0);
    CHECK(&c == &w);  // not copied
  });
  CHECK(calls == 1);
  // A subset is not in memory: read 7 at a time, each chunk its rows' windows and labels.
  const std::vector<int> rows = {49, 3, 8, 8, 0, 12, 30, 31, 1, 2, 5, 6, 7, 9, 10, 11, 44};
  const SubsetSource sub(mem, rows);
  std::vector<int> firsts, sizes;
  for_each_chunk(sub, 7, [&](int first, const Windows& c) {
    firsts.push_back(first);
    sizes.push_back(c.size());
    std::vector<int> want(rows.begin() + first, rows.begin() + first + c.size());
    CHECK(c.x == w.subset(want).x);
    CHECK(c.labels == w.subset(want).labels);
  });
  CHECK(firsts == std::vector<int>{0, 7, 14});
  CHECK(sizes == std::vector<int>{7, 7, 3});
  CHECK(sub.counters().windows == 17);  // each window read once
  CHECK_THROWS_AS(for_each_chunk(sub, 0, [](int, const Windows&) {}), std::invalid_argument);
}

TEST_CASE("a resampled source reads what resample_windows makes of each window in memory") {
  Windows w = small_set(30);  // 40 samples at the generator's rate
  const InMemorySource mem(w);
  const std::vector<int> rows = {3, 29, 0, 17};
  const SubsetSource sub(mem, rows);
  const double to = w.sample_rate_hz * 1.5;
  const ResampledSource rs(sub, to, 50);
  CHECK(rs.size() == 4);
  CHECK(rs.meta().sample_rate_hz == to);
  CHECK(rs.meta().length == 50);
  CHECK(rs.row_size() == 6 * 50);
  CHECK(rs.meta().labels == w.subset(rows).labels);
  const Windows want = resample_windows(w.subset(rows), to, 50);
  RowMatrixXf got(4, rs.row_size());
  const std::vector<int> all = {0, 1, 2, 3};
  rs.read(all.data(), 4, got.data());
  CHECK(got == want.x);  // window by window: the same numbers
  const int one = 2;     // one window alone: the same as in the batch
  RowMatrixXf single(1, rs.row_size());
  rs.read(&one, 1, single.data());
  CHECK(single.row(0) == want.x.row(2));
  CHECK(rs.identity() != sub.identity());
  CHECK(rs.storage_text().find("resampled as read to") != std::string::npos);
  // The control: at the windows' own rate and length, the windows themselves.
  CHECK(materialize(ResampledSource(sub, w.sample_rate_hz, 40)).x == materialize(sub).x);
  CHECK_THROWS_AS(ResampledSource(sub, 0.0, 50), std::invalid_argument);
  CHECK_THROWS_AS(ResampledSource(sub, to, 0), std::invalid_argument);
}

TEST_CASE("a mapped .npy folder reads what read_windows_npy reads (NCL and NLC)") {
  const Windows w = small_set(30);
  for (const NpyLayout layout : {NpyLayout::kChannelsFirst, NpyLayout::kChannelsLast}) {
    const std::string dir = scratch_dir(std::string("map_") + to_string(layout));
    NpyWriteOptions wo;
    wo.layout = layout;
    write_windows_npy(w, dir, wo);
    const Windows mem = read_windows_npy(dir);
    const MappedNpySource map(dir);
    CHECK(map.layout() == layout);
    CHECK(map.shards().size() == 1);
    CHECK(read_all(map) == mem.x);
    CHECK(map.meta().labels == mem.labels);
    CHECK(map.meta().subjects == mem.subjects);
    CHECK(map.meta().parts == mem.parts);
    CHECK(map.meta().channel_names == mem.channel_names);
    CHECK(map.meta().modalities == mem.modalities);
    CHECK(map.meta().sample_rate_hz == mem.sample_rate_hz);
    CHECK(map.counters().bytes == 30 * 6 * 40 * 4);
    fs::remove_all(dir);
  }
}

TEST_CASE("float16 conversion: exact widening, round to nearest even, Inf and NaN") {
  // Known half bit patterns (IEEE 754 binary16).
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));  // the smallest normal
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);                      // halfway to 2^16 rounds up to Inf
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie: to even
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // a tie: to even, up
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);             // tie to even: 0
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half(-0.0f) == 0x8000);
  // Every half value survives the round trip.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    if (float_to_half(f) != h) {
      FAIL("round trip of half " << h);
      break;
    }
  }
}

TEST_CASE("shards: written in constant memory, read back whole, in memory and mapped") {
  const Windows w = small_set(103);
  const InMemorySource mem(w);
  const std::string dir = scratch_dir("shards");
  ShardWriteOptions so;
  so.shard_bytes = 20 * 6 * 40 * 4 + 100;  // 20 windows a shard
  so.chunk_windows = 7;
  const auto shards = write_npy_shards(mem, dir, so);
  REQUIRE(shards.size() == 6);
  CHECK(shards[0].windows == 20);
  CHECK(shards[5].windows == 3);
  for (const char* f :
       {"X_000.npy", "Y_000.npy", "pid_000.npy", "split_000.npy", "X_005.npy", "meta.json"}) {
    CHECK_MESSAGE(fs::exists(dir + "/" + f), f);
  }
  CHECK(is_sharded_npy_folder(dir));
  const MappedNpySource map(dir);
  CHECK(map.shards().size() == 6);
  CHECK(read_all(map) == w.x);
  CHECK(map.meta().labels == w.labels);
  CHECK(map.meta().subjects == w.subjects);
  CHECK(map.meta().parts == w.parts);
  CHECK(map.meta().channel_names == w.channel_names);
  CHECK(map.storage().runs == std::vector<int>{20, 20, 20, 20, 20, 3});
  // Any command reads the folder into memory.
  DatasetOptions keep;
  keep.keep_rate_and_length = true;
  const Dataset d = open_dataset("npy:" + dir, keep);
  CHECK(d.windows.x == w.x);
  CHECK(d.windows.parts == w.parts);
  // Rewritten with fewer shards: the old ones go.
  so.shard_bytes = 60 * 6 * 40 * 2;  // 60 float16 windows
  so.float16 = true;
  so.layout = NpyLayout::kChannelsLast;
  CHECK(write_npy_shards(mem, dir, so).size() == 2);
  CHECK_FALSE(fs::exists(dir + "/X_002.npy"));
  CHECK_FALSE(fs::exists(dir + "/Y_005.npy"));
  const MappedNpySource half(dir);
  CHECK(half.dtype() == "<f2");
  CHECK(half.layout() == NpyLayout::kChannelsLast);
  const RowMatrixXf x = read_all(half);
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (x.data()[i] != half_to_float(float_to_half(w.x.data()[i]))) {
      FAIL("float16 value " << i);
      break;
    }
  }
  CHECK(half.counters().bytes == 103 * 6 * 40 * 2);
  fs::remove_all(dir);
}

TEST_CASE("a mapped folder that disagrees with itself is refused, naming the file") {
  const std::string dir = scratch_dir("bad_shards");
  auto reset = [&] {
    fs::remove_all(dir);
    fs::create_directories(dir);
  };
  const std::vector<float> x(2 * 3 * 8, 0.5f);
  auto check_refused = [&](const std::string& want) {
    CHECK_THROWS_WITH_AS(MappedNpySource{dir}, doctest::Contains(want.c_str()),
                         std::invalid_argument);
  };
  // Shapes differ.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(2, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/X_001.npy", "<f4", "(2, 4, 6)", bytes_of(x));
  check_refused("every shard has the same shape");
  // Dtypes differ.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(2, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/X_001.npy", "<f2", "(4, 3, 8)", bytes_of(x));
  check_refused("every shard has the same dtype");
  // Truncated: the header states more than the file holds.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(3, 3, 8)", bytes_of(x));
  check_refused(
      "truncated data (the header states 72 elements of 4 bytes, 288 bytes; the "
      "file holds 192");
  // Fortran order.
  reset();
  write_raw_npy(dir + "/X.npy", "<f4", "(2, 3, 8)", bytes_of(x), true);
  check_refused("Fortran (column-major) order");
  // float64 is not mapped.
  reset();
  write_raw_npy(dir + "/X.npy", "<f8", "(1, 3, 8)", bytes_of(x));
  check_refused("a memory map reads little-endian float32");
  // Labels of another count than their shard's windows.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(2, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/Y_000.npy", "<i8", "(3,)", bytes_of(std::vector<std::int64_t>{0, 1, 1}));
  check_refused("one entry per window");
  // Labels for some shards only.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/X_001.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/Y_000.npy", "<i8", "(1,)", bytes_of(std::vector<std::int64_t>{0}));
  check_refused("one per shard, or none");
  // A gap in the numbers; X.npy beside shards.
  reset();
  write_raw_npy(dir + "/X_000.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/X_002.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  check_refused("X_001.npy is missing");
  write_raw_npy(dir + "/X_001.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  write_raw_npy(dir + "/X.npy", "<f4", "(1, 3, 8)", bytes_of(x));
  check_refused("both X.npy and shards");
  // Nothing there.
  reset();
  CHECK_THROWS_AS(MappedNpySource{dir}, std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("a mapped folder: non-finite windows named when read; a changed file detected") {
  const std::string dir = scratch_dir("changed");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<float> x(3 * 2 * 4, 1.0f);
  x[2 * 8 + 5] = std::nanf("");  // window 2, channel 1, sample 1
  write_raw_npy(dir + "/X_000.npy", "<f4", "(3, 2, 4)", bytes_of(x));
  write_raw_npy(dir + "/X_001.npy", "<f4", "(3, 2, 4)", bytes_of(std::vector<float>(24, 2.0f)));
  const MappedNpySource map(dir);
  std::vector<float> out(8);
  const int ok = 4, bad = 2;
  map.read(&ok, 1, out.data());
  CHECK(out[0] == 2.0f);
  CHECK_THROWS_WITH_AS(map.read(&bad, 1, out.data()),
                       doctest::Contains("X_000.npy: window 2 (row 2 of the folder) holds a "
                                         "non-finite value at channel 1, sample 1"),
                       std::runtime_error);
  map.check_unchanged();
  const std::string id = map.identity();
  // Rewritten with other numbers (a later modification time).
  struct timespec later[2] = {{0, UTIME_OMIT}, {4000000000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (dir + "/X_001.npy").c_str(), later, 0) == 0);
  CHECK_THROWS_WITH_AS(map.check_unchanged(),
                       doctest::Contains("X_001.npy changed while it was read (modified)"),
                       std::runtime_error);
  CHECK(MappedNpySource(dir).identity() != id);
  fs::resize_file(dir + "/X_001.npy", 100);
  CHECK_THROWS_WITH_AS(map.check_unchanged(), doctest::Contains("-> 100 bytes"),
                       std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("a shard write that fails leaves nothing and names the shard") {
  const Windows w = small_set(40);
  const InMemorySource mem(w);
  const std::string dir = scratch_dir("full");
  fs::remove_all(dir);
  fs::create_directories(dir);
  ShardWriteOptions so;
  so.shard_bytes = 10 * 6 * 40 * 4;  // 4 shards of 9,600 bytes
  // A file size limit stands in for a full disk: no shard of 9,600 bytes fits.
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 9000;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string message;
  try {
    write_npy_shards(mem, dir, so);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  CHECK(message.find("writing " + dir + "/X_000.npy failed") != std::string::npos);
  MESSAGE(message);
  CHECK(fs::is_empty(dir));
  // A source that fails at row 25: shards 0 and 1 were written (their companions come after
  // the last shard), and go with the failed one.
  struct Failing final : WindowSource {
    const InMemorySource& base;
    explicit Failing(const InMemorySource& b) : base(b) {}
    const Windows& meta() const override { return base.meta(); }
    void read(const int* rows, int count, float* out) const override {
      for (int k = 0; k < count; ++k)
        if (rows[k] == 25) throw std::runtime_error("read error at row 25");
      base.read(rows, count, out);
    }
    std::string identity() const override { return "failing"; }
    std::string storage_text() const override { return "failing"; }
  } failing(mem);
  const std::string want = "writing " + dir +
                           "/X_002.npy failed, and the 2 files already written were removed: "
                           "read error at row 25";
  CHECK_THROWS_WITH_AS(write_npy_shards(failing, dir, so), doctest::Contains(want.c_str()),
                       std::runtime_error);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("a shard sink: windows pushed one at a time, as write_npy_shards writes them") {
  const Windows w = small_set(23);
  const std::string a = scratch_dir("sink_a"), b = scratch_dir("sink_b");
  for (const auto& d : {a, b}) {
    fs::remove_all(d);
    fs::create_directories(d);
  }
  ShardWriteOptions so;
  so.shard_bytes = 5 * 6 * 40 * 2 + 7;  // float16: 5 windows a shard, the last of 3
  so.float16 = true;
  so.layout = NpyLayout::kChannelsLast;
  const InMemorySource mem(w);
  write_npy_shards(mem, a, so);
  {
    NpyShardSink sink(b, w.channels, w.length, so);
    CHECK(sink.windows_per_shard() == 5);
    for (int i = 0; i < w.size(); ++i) sink.put(w.x.row(i).data());
    const auto shards = sink.finish(metadata_of(w));
    REQUIRE(shards.size() == 5);
    CHECK(shards.back().windows == 3);
  }
  auto file = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const std::string stem : {"X_000", "X_004", "Y_002", "pid_004"}) {
    CHECK(!file(a + "/" + stem + ".npy").empty());
    CHECK(file(a + "/" + stem + ".npy") == file(b + "/" + stem + ".npy"));
  }
  const MappedNpySource back(b);
  CHECK(read_all(back) == read_all(MappedNpySource(a)));
  // Metadata of another count is refused; a sink dropped before finish() removes its shards,
  // and the folder's other files stay.
  const std::string c = scratch_dir("sink_c");
  fs::remove_all(c);
  fs::create_directories(c);
  std::ofstream(c + "/keep.txt") << "x";
  {
    NpyShardSink sink(c, w.channels, w.length, so);
    for (int i = 0; i < 12; ++i) sink.put(w.x.row(i).data());
    CHECK(fs::exists(c + "/X_001.npy"));
    CHECK_THROWS_WITH_AS(sink.finish(metadata_of(w)),
                         doctest::Contains("the metadata describes 23 windows of 6 x 40; 12 of "
                                           "6 x 40 were written"),
                         std::invalid_argument);
  }
  CHECK(!fs::exists(c + "/X_000.npy"));
  CHECK(!fs::exists(c + "/X_002.npy"));
  CHECK(fs::exists(c + "/keep.txt"));
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST_CASE("will_need: the kernel reads a mapped folder's announced windows ahead") {
  const Windows w = small_set(2000);  // 960 bytes a window, 1.9 MB
  const std::string dir = scratch_dir("will_need");
  write_windows_npy(w, dir);
  const std::string x = dir + "/X.npy";
  const MappedNpySource src(dir);
  const int fd = ::open(x.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  const auto len = static_cast<size_t>(st.st_size);
  void* view = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  REQUIRE(view != MAP_FAILED);
  const long page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> in_core((len + static_cast<size_t>(page) - 1) /
                                     static_cast<size_t>(page));
  const std::int64_t header = static_cast<std::int64_t>(len) - 2000LL * 960;
  // Resident pages among those holding windows [a, b).
  auto resident = [&](int a, int b) {
    REQUIRE(::mincore(view, len, in_core.data()) == 0);
    int count = 0;
    for (std::int64_t p = (header + a * 960LL) / page; p <= (header + b * 960LL - 1) / page; ++p)
      count += in_core[static_cast<size_t>(p)] & 1;
    return count;
  };
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // evicts the file's clean pages
  if (resident(0, 2000) > 0) {
    MESSAGE("the page cache kept X.npy's pages after POSIX_FADV_DONTNEED: not checked");
  } else {
    std::vector<int> rows;
    for (int r = 1200; r < 1300; ++r) rows.push_back(r);
    for (int r = 100; r < 150; ++r) rows.push_back(r);
    src.will_need(rows.data(), static_cast<int>(rows.size()));
    int got = 0;
    const auto want =
        static_cast<int>((header + 1300 * 960LL - 1) / page - (header + 1200 * 960LL) / page + 1);
    for (int t = 0; t < 200 && got < want; ++t) {  // asynchronous: up to 2 s
      got = resident(1200, 1300);
      if (got < want) ::usleep(10000);
    }
    CHECK(got == want);
    CHECK(resident(130, 140) > 0);
    CHECK(resident(600, 900) == 0);      // the control: windows not announced stay on disk
    CHECK(src.counters().windows == 0);  // announced, not read
  }
  ::munmap(view, len);
  ::close(fd);
  const int bad = 2000;
  CHECK_THROWS_AS(src.will_need(&bad, 1), std::out_of_range);
  const SubsetSource sub(src, {5, 1999});
  const int one = 1;
  sub.will_need(&one, 1);  // row 1999 of the folder
  CHECK_THROWS_AS(sub.will_need(&bad, 1), std::out_of_range);
  const InMemorySource mem(w);
  CHECK_THROWS_AS(mem.will_need(&bad, 1), std::out_of_range);
  fs::remove_all(dir);
}

TEST_CASE("select_stream splits a folder as split() splits it in memory, without reading it") {
  Windows w = small_set(60);
  const std::string dir = scratch_dir("select_stream");
  write_windows_npy(w, dir, {});
  for (const SplitKind kind :
       {SplitKind::kRandom, SplitKind::kSubjectKfold, SplitKind::kPredefined, SplitKind::kAll}) {
    CAPTURE(to_string(kind));
    DataOptions o;
    o.data = "npy:" + dir;
    o.stream = true;
    o.split = kind;
    o.window_length = 40;
    std::ostringstream log;
    const StreamSelection s = select_stream(o, log);
    DataOptions mem = o;
    mem.stream = false;
    std::ostringstream log2;
    const SplitSelection m = select_and_split(mem, log2, 40);
    CHECK(read_all(*s.train) == m.train.x);
    CHECK(read_all(*s.test) == m.test.x);
    CHECK(s.train->meta().labels == m.train.labels);
    CHECK(s.train->meta().channel_names == m.train.channel_names);
    CHECK(s.train->meta().modalities == m.train.modalities);
    CHECK(log.str().find("split: ") != std::string::npos);
  }
  // Options that change windows are refused by name.
  DataOptions o;
  o.data = "npy:" + dir;
  o.stream = true;
  std::ostringstream log;
  o.dataset.keep_classes = "walking";
  CHECK_THROWS_WITH_AS(select_stream(o, log), doctest::Contains("DatasetOptions::keep_classes"),
                       std::invalid_argument);
  o.dataset.keep_classes.clear();
  o.dataset.modalities = "acc=0-2";
  CHECK_THROWS_WITH_AS(select_stream(o, log), doctest::Contains("selects or reorders channels"),
                       std::invalid_argument);
  o.dataset.modalities.clear();
  o.window_length = 100;
  CHECK_THROWS_WITH_AS(select_stream(o, log), doctest::Contains("own length (40 samples)"),
                       std::invalid_argument);
  o.data = "generator";
  CHECK_THROWS_WITH_AS(select_stream(o, log), doctest::Contains("reads a .npy folder"),
                       std::invalid_argument);
  fs::remove_all(dir);
}

TEST_CASE("sample_windows of a mapped folder reads only its sample, the same windows") {
  const Windows w = small_set(120);
  const std::string dir = scratch_dir("sample");
  write_windows_npy(w, dir, {});
  const Windows stored = read_windows_npy(dir);
  const MappedNpySource map(dir);
  DataOptions o;
  for (const int transitions : {0, 25}) {
    for (const int cap : {50, 500}) {
      CAPTURE(transitions);
      CAPTURE(cap);
      const auto before = map.counters().windows;
      const WindowSample a = sample_windows(stored, o, transitions, cap, 9);
      const WindowSample b = sample_windows(map, o, transitions, cap, 9);
      CHECK(a.windows.x == b.windows.x);
      CHECK(a.windows.labels == b.windows.labels);
      CHECK(a.windows.subjects == b.windows.subjects);
      CHECK(a.subset == b.subset);
      CHECK(a.train_windows == b.train_windows);
      const auto read = map.counters().windows - before;
      if (transitions > 0) {
        CHECK(read <= 2 * transitions);  // the rows the splices name, no more
      } else {
        CHECK(read == std::min(cap, 120));
      }
    }
  }
  // The draws alone are synthetic_transitions' draws.
  std::vector<SpliceRecord> rec;
  synthetic_transitions(stored, 30, 4, &rec);
  const auto drawn = draw_transitions(stored.size(), stored.length, 30, 4);
  REQUIRE(drawn.size() == rec.size());
  for (size_t k = 0; k < rec.size(); ++k) {
    CHECK(drawn[k].first == rec[k].first);
    CHECK(drawn[k].second == rec[k].second);
    CHECK(drawn[k].draw.lambda == rec[k].draw.lambda);
    CHECK(drawn[k].draw.s1 == rec[k].draw.s1);
  }
  fs::remove_all(dir);
}
