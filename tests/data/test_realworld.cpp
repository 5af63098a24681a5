// The zip reader (zip_archive.hpp) on archives written here by hand from APPNOTE's layout (stored
// and raw-deflated entries, an archive inside an archive, damaged ones), and RealWorld (HAR)
// read from such archives in its download's layout, quirks included (a session archive of
// archives, a file named acc_<activity>_2_<position>.csv, a session without a forearm file, a
// readMe that cuts the session), with the windows worked out by hand from ssl-wearables' rules.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moca/data/dataset.hpp"
#include "moca/data/raw_sets.hpp"
#include "moca/data/zip_archive.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using moca::data::Windows;
using moca::data::ZipArchive;

namespace {

void put16(std::string& b, std::uint32_t v) {
  b.push_back(static_cast<char>(v & 0xff));
  b.push_back(static_cast<char>((v >> 8) & 0xff));
}
void put32(std::string& b, std::uint32_t v) {
  put16(b, v & 0xffff);
  put16(b, v >> 16);
}

std::string raw_deflate(const std::string& in) {
  z_stream s{};
  deflateInit2(&s, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&s, static_cast<uLong>(in.size())), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

/// A zip archive of `entries` (name, bytes), deflated unless `stored`.
std::string zip_of(const std::vector<std::pair<std::string, std::string>>& entries,
                   bool stored = false) {
  std::string b, cd;
  for (const auto& [name, data] : entries) {
    const auto crc = static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const std::string body = stored ? data : raw_deflate(data);
    const auto offset = static_cast<std::uint32_t>(b.size());
    const std::uint32_t method = stored ? 0 : 8;
    put32(b, 0x04034b50);
    put16(b, 20);
    put16(b, 0);
    put16(b, method);
    put32(b, 0);  // time, date
    put32(b, crc);
    put32(b, static_cast<std::uint32_t>(body.size()));
    put32(b, static_cast<std::uint32_t>(data.size()));
    put16(b, static_cast<std::uint32_t>(name.size()));
    put16(b, 0);
    b += name + body;
    put32(cd, 0x02014b50);
    put16(cd, 20);
    put16(cd, 20);
    put16(cd, 0);
    put16(cd, method);
    put32(cd, 0);
    put32(cd, crc);
    put32(cd, static_cast<std::uint32_t>(body.size()));
    put32(cd, static_cast<std::uint32_t>(data.size()));
    put16(cd, static_cast<std::uint32_t>(name.size()));
    put32(cd, 0);  // extra, comment lengths
    put32(cd, 0);  // disk, internal attributes
    put32(cd, 0);  // external attributes
    put32(cd, offset);
    cd += name;
  }
  const auto cd_offset = static_cast<std::uint32_t>(b.size());
  b += cd;
  put32(b, 0x06054b50);
  put32(b, 0);
  put16(b, static_cast<std::uint32_t>(entries.size()));
  put16(b, static_cast<std::uint32_t>(entries.size()));
  put32(b, static_cast<std::uint32_t>(cd.size()));
  put32(b, cd_offset);
  put16(b, 0);
  return b;
}

/// A position's CSV: `rows` rows, x = (first + r) / 100 m/s², y = -1, z = 9.81; row `empty`
/// (if >= 0) has an empty x.
std::string position_csv(int rows, int first, int empty = -1) {
  std::ostringstream s;
  s << "id,attr_time,attr_x,attr_y,attr_z\n";
  for (int r = 0; r < rows; ++r) {
    s << r + 1 << "," << 1435000000000 + 20 * r << ",";
    if (r != empty) s << (first + r) / 100.0;
    s << ",-1,9.81\n";
  }
  return s.str();
}

std::string read_me(const std::vector<int>& entries) {
  std::string s = "> sensor: acc\n";
  for (int e : entries) s += "> entries: " + std::to_string(e) + "\n> columns: 5\n";
  return s;
}

const char* const kActivities[] = {"climbingdown", "climbingup", "jumping",  "lying",
                                   "running",      "sitting",    "standing", "walking"};

/// proband1: every activity one session of 600 forearm rows (one window), except walking: 1000
/// forearm rows with a chest of 760 (two windows: the readMe cuts at 760), and jumping without a
/// forearm file. proband4: climbingup an archive of 2 sessions (550 and 700 rows: one window
/// each), walking named acc_walking_2_forearm.csv (600 rows).
std::string realworld_tree(const std::string& name) {
  const std::string d = moca::data::test::scratch_dir(name);
  fs::remove_all(d);
  for (int p : {1, 4}) {
    const std::string data = d + "/realworld2016_dataset/proband" + std::to_string(p) + "/data";
    fs::create_directories(data);
    for (int k = 0; k < 8; ++k) {
      const std::string a = kActivities[k];
      std::string zip;
      if (p == 1 && a == "walking") {
        zip = zip_of({{"acc_walking_chest.csv", position_csv(760, 0)},
                      {"acc_walking_forearm.csv", position_csv(1000, 1000 * k)},
                      {"readMe", read_me({760, 1000})}});
      } else if (p == 1 && a == "jumping") {
        zip = zip_of({{"acc_jumping_chest.csv", position_csv(600, 0)}, {"readMe", read_me({600})}});
      } else if (p == 4 && a == "climbingup") {
        std::vector<std::pair<std::string, std::string>> sessions;
        for (int i = 1; i <= 2; ++i) {
          const int rows = i == 1 ? 550 : 700;
          const std::string stem = "acc_climbingup_" + std::to_string(i);
          sessions.emplace_back(stem + "_csv.zip",
                                zip_of({{stem + "_forearm.csv", position_csv(rows, 5000 * i)},
                                        {"readMe", read_me({rows})}},
                                       i == 2));
        }
        zip = zip_of(sessions);
      } else {
        const std::string stem =
            "acc_" + a + (p == 4 && a == "walking" ? std::string("_2") : std::string());
        zip = zip_of({{stem + "_forearm.csv", position_csv(600, 1000 * k + 100 * p)},
                      {"readMe", read_me({600})}});
      }
      moca::data::test::write_text(data + "/acc_" + a + "_csv.zip", zip);
    }
  }
  return d;
}

}  // namespace

TEST_CASE("zip: stored and deflated entries, an archive inside an archive, damage refused") {
  const std::string text(5000, 'a');
  const std::string inner = zip_of({{"x.txt", "hello"}}, true);
  const std::string z = zip_of({{"a.txt", text}, {"dir/", ""}, {"in.zip", inner}});
  const ZipArchive a = ZipArchive::from_bytes(z, "t.zip");
  CHECK(a.names() == std::vector<std::string>{"a.txt", "dir/", "in.zip"});
  CHECK(a.read("a.txt") == text);
  CHECK(a.read("dir/").empty());
  CHECK(ZipArchive::from_bytes(a.read("in.zip"), "t.zip/in.zip").read("x.txt") == "hello");
  CHECK_THROWS_WITH_AS(a.read("b.txt"), doctest::Contains("t.zip: no entry b.txt"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ZipArchive::from_bytes("not a zip at all, not at all", "n.zip"),
                       doctest::Contains("n.zip: not a zip archive"), std::invalid_argument);
  // a flipped byte in the stored data: the CRC says so
  std::string damaged = zip_of({{"x.txt", "hello"}}, true);
  damaged[30 + 5] = 'j';
  CHECK_THROWS_WITH_AS(ZipArchive::from_bytes(damaged, "d.zip").read("x.txt"),
                       doctest::Contains("d.zip/x.txt: CRC-32 does not match"),
                       std::invalid_argument);
  // the central directory pointing past the end
  std::string far = zip_of({{"x.txt", "hello"}}, true);
  far[far.size() - 6] = '\x7f';
  CHECK_THROWS_WITH_AS(ZipArchive::from_bytes(far, "f.zip"),
                       doctest::Contains("points outside the archive"), std::invalid_argument);
  // a deflated entry stating more than deflate can give (a fuzz finding: it was allocated)
  std::string bomb = zip_of({{"a.txt", text}});
  const size_t central = bomb.find(std::string("PK\x01\x02", 4));
  REQUIRE(central != std::string::npos);
  bomb.replace(central + 24, 4, std::string("\xff\xff\xff\x7f", 4));
  CHECK_THROWS_WITH_AS(ZipArchive::from_bytes(bomb, "b.zip").read("a.txt"),
                       doctest::Contains("more than deflate can produce"), std::invalid_argument);
  // ZIP64 markers are refused by name
  std::string z64 = zip_of({{"x.txt", "hello"}}, true);
  for (int k = 0; k < 4; ++k) z64[z64.size() - 6 + static_cast<size_t>(k)] = '\xff';
  CHECK_THROWS_WITH_AS(ZipArchive::from_bytes(z64, "z.zip"), doctest::Contains("ZIP64"),
                       std::invalid_argument);
}

TEST_CASE("realworld: sessions, archives of archives, the _2 names and the readMe's cut") {
  const std::string d = realworld_tree("realworld");
  CHECK(moca::data::is_realworld_folder(d));
  CHECK(moca::data::detect_format(d) == moca::data::DataFormat::kRealWorld);
  moca::data::RawSetCounts n;
  const Windows w = moca::data::load_realworld_windows(d, &n);
  CHECK(w.length == 300);
  CHECK(w.sample_rate_hz == 30.0);
  CHECK(w.class_names.size() == 8);
  CHECK(w.class_names[1] == "climbingup");
  CHECK(w.subject_names == std::vector<std::string>{"1", "4"});
  // proband1: 6 activities x 1 + walking 2 (cut at 760) + jumping 0; proband4: 6 x 1 +
  // climbingup 1 + 1 + walking 1
  REQUIRE(w.size() == 8 + 9);
  CHECK(n.files == 16);
  CHECK(n.null_windows == 1);  // proband1's jumping
  int walking1 = 0, climb4 = 0;
  for (int i = 0; i < w.size(); ++i) {
    walking1 += w.subjects(i) == 0 && w.labels(i) == 7;
    climb4 += w.subjects(i) == 1 && w.labels(i) == 1;
    CHECK(w.labels(i) != (w.subjects(i) == 0 ? 2 : -1));  // no proband1 jumping window
  }
  CHECK(walking1 == 2);
  CHECK(climb4 == 2);
  // proband1 walking's second window starts at row 250: x = (7000 + 250 + t') / 100 / 9.81
  int row = -1;
  for (int i = 0; i < w.size() && row < 0; ++i)
    if (w.subjects(i) == 0 && w.labels(i) == 7) row = i + 1;
  const double g = 9.81;
  CHECK(w.window(row)(0, 0) == doctest::Approx(7250 / 100.0 / g).epsilon(1e-6));
  CHECK(w.window(row)(0, 299) == doctest::Approx(7749 / 100.0 / g).epsilon(1e-6));
  // sample 1 of 300 lies at 499/299 of the 500: between rows 1 and 2
  const double pos = 499.0 / 299.0;
  CHECK(w.window(row)(0, 1) == doctest::Approx((7250 + pos) / 100.0 / g).epsilon(1e-6));
  CHECK(w.window(row)(1, 17) == doctest::Approx(-1 / g).epsilon(1e-6));
  CHECK(w.window(row)(2, 100) == doctest::Approx(1.0).epsilon(1e-6));
  // proband4's second climbingup session (deflated inside a deflated archive): x from 10000
  int last = -1;
  for (int i = 0; i < w.size(); ++i)
    if (w.subjects(i) == 1 && w.labels(i) == 1) last = i;
  CHECK(w.window(last)(0, 0) == doctest::Approx(10000 / 100.0 / g).epsilon(1e-6));
  // through the registry
  const auto ds = moca::data::open_dataset("realworld:" + d, [] {
    moca::data::DatasetOptions o;
    o.target_rate_hz = 30.0;
    o.length = 300;
    return o;
  }());
  CHECK(ds.windows.size() == w.size());
  CHECK(ds.notes.front().find("1 sessions without a forearm file") != std::string::npos);
}

TEST_CASE("realworld: control: two activities' archives swapped swap the labels, not the data") {
  const std::string d = realworld_tree("realworld_ctl");
  const Windows a = moca::data::load_realworld_windows(d);
  const std::string data = d + "/realworld2016_dataset/proband1/data/";
  // lying's and running's archives hold their own names inside: rewrite them under each other's
  const auto swap_names = [&](const std::string& from, const std::string& to, int k) {
    moca::data::test::write_text(
        data + "acc_" + to + "_csv.zip",
        zip_of({{"acc_" + to + "_forearm.csv", position_csv(600, 1000 * k + 100)},
                {"readMe", read_me({600})}}));
    (void)from;
  };
  swap_names("lying", "running", 3);
  swap_names("running", "lying", 4);
  const Windows b = moca::data::load_realworld_windows(d);
  REQUIRE(a.size() == b.size());
  // proband1's windows are in activity order: lying (3) and running (4) trade places
  int lying = -1, running = -1;
  for (int i = 0; i < a.size(); ++i) {
    if (a.subjects(i) == 0 && a.labels(i) == 3) lying = i;
    if (a.subjects(i) == 0 && a.labels(i) == 4) running = i;
  }
  REQUIRE(lying >= 0);
  REQUIRE(running >= 0);
  CHECK(a.x.row(lying) == b.x.row(running));
  CHECK(a.x.row(running) == b.x.row(lying));
  CHECK(b.labels(lying) == 3);
}

TEST_CASE("realworld: a missing archive, a missing readMe and a bad cell are refused") {
  const std::string d = realworld_tree("realworld_bad");
  const std::string data = d + "/realworld2016_dataset/proband1/data/";
  moca::data::test::write_text(data + "acc_lying_csv.zip",
                               zip_of({{"acc_lying_forearm.csv", position_csv(600, 0)}}));
  CHECK_THROWS_WITH_AS(moca::data::load_realworld_windows(d),
                       doctest::Contains("acc_lying_csv.zip: no readMe"), std::invalid_argument);
  std::string csv = position_csv(600, 0);
  csv.replace(csv.find(",-1,"), 4, ",x1,");
  moca::data::test::write_text(data + "acc_lying_csv.zip", zip_of({{"acc_lying_forearm.csv", csv},
                                                                   {"readMe", read_me({600})}}));
  CHECK_THROWS_WITH_AS(moca::data::load_realworld_windows(d),
                       doctest::Contains("acc_lying_csv.zip/acc_lying_forearm.csv:2: 'x1'"),
                       std::invalid_argument);
  fs::remove(data + "acc_lying_csv.zip");
  CHECK_THROWS_WITH_AS(moca::data::load_realworld_windows(d),
                       doctest::Contains("acc_lying_csv.zip is missing"), std::runtime_error);
  // an empty cell drops its window, as pandas' NaN does
  moca::data::test::write_text(
      data + "acc_lying_csv.zip",
      zip_of({{"acc_lying_forearm.csv", position_csv(600, 0, 10)}, {"readMe", read_me({600})}}));
  moca::data::RawSetCounts n;
  const Windows w = moca::data::load_realworld_windows(d, &n);
  CHECK(n.nan_rows == 1);
  CHECK(w.size() == 16);
}
