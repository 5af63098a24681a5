#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "moca/data/hapt.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

namespace {

std::string fixture_hapt() {
  return moca::data::test::fixture_dir() + "/hapt";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch copy of the fixture's RawData (optionally gzip-compressed) to corrupt in a test.
std::string scratch_copy(const std::string& name, bool gz = false) {
  const std::string d = moca::data::test::scratch_dir(name);
  const std::string src = fixture_hapt() + "/RawData/";
  for (const char* f :
       {"acc_exp01_user01.txt", "gyro_exp01_user01.txt", "acc_exp02_user02.txt",
        "gyro_exp02_user02.txt", "acc_exp03_user02.txt", "gyro_exp03_user02.txt", "labels.txt"}) {
    const std::string body = slurp(src + f);
    const std::string dst = d + "/" + f;
    std::remove(dst.c_str());
    std::remove((dst + ".gz").c_str());
    if (gz) {
      moca::data::test::write_gz(dst + ".gz", body);
    } else {
      moca::data::test::write_text(dst, body);
    }
  }
  return d;
}

// acc row r (1-based) of the fixture: r/100, experiment, 0.5 + 0.25 sin(r).
void check_fixture_row(const Recording& rec, int r) {
  const auto t = static_cast<Eigen::Index>(r - 1);
  CHECK(std::abs(rec.signal(0, t) - r / 100.0f) < 1e-6f);
  CHECK(std::abs(rec.signal(1, t) - static_cast<float>(rec.experiment)) < 1e-6f);
  CHECK(std::abs(rec.signal(2, t) - static_cast<float>(0.5 + 0.25 * std::sin(r))) < 1e-5f);
  CHECK(std::abs(rec.signal(3, t) + r / 100.0f) < 1e-6f);
  CHECK(std::abs(rec.signal(4, t) - rec.experiment / 10.0f) < 1e-6f);
  CHECK(std::abs(rec.signal(5, t) - static_cast<float>(0.1 * std::cos(r))) < 1e-5f);
}

void check_fixture(const std::vector<Recording>& recs) {
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].experiment == 1);
  CHECK(recs[0].subject == 1);
  CHECK(recs[1].experiment == 2);
  CHECK(recs[1].subject == 2);
  CHECK(recs[2].experiment == 3);
  CHECK(recs[2].subject == 2);
  CHECK(recs[0].samples() == 120);
  CHECK(recs[1].samples() == 100);
  CHECK(recs[2].samples() == 80);
  for (const auto& r : recs) {
    CHECK(r.signal.rows() == 6);
    CHECK(r.sample_labels.size() == r.samples());
    CHECK(r.channel_names == hapt_channel_names());
    check_fixture_row(r, 1);
    check_fixture_row(r, r.samples());
    check_fixture_row(r, 37);
  }
}

}  // namespace

TEST_CASE("hapt: channel and activity names") {
  CHECK(hapt_channel_names() ==
        std::vector<std::string>{"acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"});
  REQUIRE(hapt_activity_names().size() == 13);
  CHECK(hapt_activity_names()[1] == "WALKING");
  CHECK(hapt_activity_names()[6] == "LAYING");
  CHECK(hapt_activity_names()[7] == "STAND_TO_SIT");
  CHECK(hapt_activity_names()[12] == "LIE_TO_STAND");
}

TEST_CASE("hapt: fixture reads with values in row order, from the root or RawData") {
  check_fixture(read_hapt_recordings(fixture_hapt()));
  check_fixture(read_hapt_recordings(fixture_hapt() + "/RawData"));
  check_fixture(read_hapt_recordings(fixture_hapt() + "/RawData/"));
}

TEST_CASE("hapt: labels.txt indices are 1-based and inclusive") {
  const auto recs = read_hapt_recordings(fixture_hapt());
  // Experiment 1: "1 1 5 11 50", "1 1 7 51 60", "1 1 4 61 100" over 120 rows.
  const auto& l1 = recs[0].sample_labels;
  CHECK(l1(9) == 0);    // row 10: before the first segment
  CHECK(l1(10) == 5);   // row 11 = start of "5 11 50"
  CHECK(l1(49) == 5);   // row 50 = its inclusive end
  CHECK(l1(50) == 7);   // row 51
  CHECK(l1(59) == 7);   // row 60
  CHECK(l1(60) == 4);   // row 61
  CHECK(l1(99) == 4);   // row 100
  CHECK(l1(100) == 0);  // row 101: unlabelled tail
  CHECK((l1.head(10).array() == 0).all());
  CHECK((l1.tail(20).array() == 0).all());
  CHECK((l1.segment(10, 40).array() == 5).all());
  // Experiment 2: "2 2 2 46 100" ends at the last row (100 of 100): valid only if 1-based.
  const auto& l2 = recs[1].sample_labels;
  CHECK(l2(0) == 1);
  CHECK(l2(39) == 1);
  CHECK((l2.segment(40, 5).array() == 0).all());  // rows 41..45 are a gap
  CHECK(l2(45) == 2);
  CHECK(l2(99) == 2);
  // The labelled rows carry the values of those rows (acc_x = row / 100).
  CHECK(std::abs(recs[0].signal(0, 10) - 0.11f) < 1e-6f);
}

TEST_CASE("hapt: gzip-compressed copies read identically") {
  const auto plain = read_hapt_recordings(fixture_hapt());
  const auto gz = read_hapt_recordings(scratch_copy("gz", true));
  REQUIRE(gz.size() == plain.size());
  for (size_t i = 0; i < gz.size(); ++i) {
    CHECK(gz[i].signal == plain[i].signal);
    CHECK(gz[i].sample_labels == plain[i].sample_labels);
    CHECK(contains(gz[i].acc_path, ".txt.gz"));
  }
}

TEST_CASE("hapt: read_hapt_labels parses rows and rejects bad lines with file:line") {
  const auto segs = read_hapt_labels(fixture_hapt() + "/RawData/labels.txt");
  REQUIRE(segs.size() == 8);
  CHECK(segs[0].experiment == 1);
  CHECK(segs[0].user == 1);
  CHECK(segs[0].activity == 5);
  CHECK(segs[0].start == 11);
  CHECK(segs[0].end == 50);
  CHECK(segs[7].line == 8);

  const std::string d = moca::data::test::scratch_dir("labels");
  const std::string p = d + "/labels.txt";
  auto bad = [&](const std::string& body, const std::string& expect) {
    moca::data::test::write_text(p, body);
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_labels(p); });
    CHECK_MESSAGE(contains(msg, p + ":2:"), msg);
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  bad("1 1 5 1 10\n1 1 5 11\n", "4 fields, expected 5");
  bad("1 1 5 1 10\n1 1 5 11 20 7\n", "6 fields, expected 5");
  bad("1 1 5 1 10\n1 1 x 11 20\n", "field 3 is not an integer ('x')");
  bad("1 1 5 1 10\n1 1 5 11.5 20\n", "field 4 is not an integer");
  bad("1 1 5 1 10\n1 1 13 11 20\n", "activity (13) must be in 1..12");
  bad("1 1 5 1 10\n1 1 0 11 20\n", "activity (0) must be in 1..12");
  bad("1 1 5 1 10\n1 1 5 0 20\n", "start (0) must be >= 1");
  bad("1 1 5 1 10\n1 1 5 30 20\n", "end (20) < start (30)");
  bad("1 1 5 1 10\n0 1 5 11 20\n", "must be >= 1");
  CHECK_THROWS_AS(read_hapt_labels(d + "/nope.txt"), std::runtime_error);
}

TEST_CASE("hapt: malformed signal files name the file and line") {
  const std::string d = moca::data::test::scratch_dir("signal");
  const std::string acc = d + "/acc.txt", gyro = d + "/gyro.txt";
  moca::data::test::write_text(gyro, "0 0 0\n0 0 0\n0 0 0\n");
  auto bad = [&](const std::string& body, const std::string& where, const std::string& expect) {
    moca::data::test::write_text(acc, body);
    const std::string msg =
        error_text<std::invalid_argument>([&] { read_hapt_recording(acc, gyro, 1, 1); });
    CHECK_MESSAGE(contains(msg, acc + where), msg);
    CHECK_MESSAGE(contains(msg, expect), msg);
  };
  bad("1 2 3\n1 2\n1 2 3\n", ":2:", "row has 2 fields, expected 3");
  bad("1 2 3\n1 2 3 4\n1 2 3\n", ":2:", "row has 4 fields, expected 3");
  bad("1 2 3\n1 2 3\n1 2", ":3:", "row has 2 fields");  // truncated last line
  bad("1 2 3\n1 abc 3\n1 2 3\n", ":2:", "field 2 is not a number ('abc')");
  bad("1 2 3\n1 nan 3\n1 2 3\n", ":2:", "field 2 is not finite");
  bad("1 2 3\n\n1 2 3\n", ":2:", "blank line inside the data");
  bad("", "", "no data rows");
  // Blank lines at the end and CRLF endings are fine; a leading '+' is accepted.
  moca::data::test::write_text(acc, "1 2 3\r\n+1 2 3\r\n1 2 3e-1\r\n\n\n");
  const Recording r = read_hapt_recording(acc, gyro, 4, 2);
  CHECK(r.samples() == 3);
  CHECK(r.experiment == 4);
  CHECK(r.subject == 2);
  CHECK(std::abs(r.signal(2, 2) - 0.3f) < 1e-7f);
  CHECK((r.sample_labels.array() == 0).all());
}

TEST_CASE("hapt: acc and gyro of different lengths name both files") {
  const std::string d = moca::data::test::scratch_dir("mismatch");
  const std::string acc = d + "/acc.txt", gyro = d + "/gyro.txt";
  moca::data::test::write_text(acc, "1 2 3\n1 2 3\n1 2 3\n");
  moca::data::test::write_text(gyro, "1 2 3\n1 2 3\n");
  const std::string msg =
      error_text<std::invalid_argument>([&] { read_hapt_recording(acc, gyro, 7, 3); });
  CHECK_MESSAGE(contains(msg, acc + "' has 3 rows"), msg);
  CHECK_MESSAGE(contains(msg, gyro + "' has 2"), msg);
  CHECK_MESSAGE(contains(msg, "experiment 7"), msg);
}

TEST_CASE("hapt: a truncated gzip stream is a runtime error naming the file") {
  const std::string d = scratch_copy("truncgz");
  std::string body;
  for (int i = 0; i < 30000; ++i) body += "0.123456789 -0.987654321 0.5555555\n";
  moca::data::test::write_gz(d + "/big.txt.gz", body);
  const std::string whole = slurp(d + "/big.txt.gz");
  std::remove((d + "/acc_exp01_user01.txt").c_str());
  moca::data::test::write_text(d + "/acc_exp01_user01.txt.gz", whole.substr(0, whole.size() / 2));
  const std::string msg = error_text<std::runtime_error>([&] { read_hapt_recordings(d); });
  CHECK_MESSAGE(contains(msg, "acc_exp01_user01.txt.gz"), msg);
}

TEST_CASE("hapt: binary files give printable messages (random-bytes labels.txt.gz, signal)") {
  const std::string d = scratch_copy("binary");
  std::string noise;
  std::uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1664525u + 1013904223u;
    noise += static_cast<char>(x >> 24);
  }
  noise[0] = 'R';  // not the gzip magic
  std::remove((d + "/labels.txt").c_str());
  moca::data::test::write_text(d + "/labels.txt.gz", noise);
  const std::string msg = error_text<std::runtime_error>([&] { read_hapt_recordings(d); });
  CHECK_MESSAGE(contains(msg, "labels.txt.gz' is not a gzip file"), msg);
  // A plain file of binary bytes: the offending field is escaped (\xHH), never printed raw.
  moca::data::test::write_text(d + "/acc_exp01_user01.txt", "1 2 3\n\x01\xff\x7f 2 3\n");
  const std::string bad = error_text<std::invalid_argument>([&] {
    read_hapt_recording(d + "/acc_exp01_user01.txt", d + "/gyro_exp01_user01.txt", 1, 1);
  });
  CHECK_MESSAGE(contains(bad, "\\x01\\xff\\x7f"), bad);
  for (const char c : bad + msg) {
    CHECK_MESSAGE((c >= 0x20 && c < 0x7f), bad);
  }
}

TEST_CASE("hapt: folder-level errors (labels vs files, missing files)") {
  auto rewrite_labels = [](const std::string& d, const std::string& body) {
    moca::data::test::write_text(d + "/labels.txt", body);
  };
  {
    const std::string d = scratch_copy("lab_end");
    rewrite_labels(d, "1 1 5 11 50\n2 2 1 1 101\n");
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, d + "/labels.txt:2:"), msg);
    CHECK_MESSAGE(contains(msg, "end (101) exceeds the recording length (100"), msg);
  }
  {
    const std::string d = scratch_copy("lab_user");
    rewrite_labels(d, "1 1 5 11 50\n2 3 1 1 10\n");
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, "labels.txt:2:"), msg);
    CHECK_MESSAGE(contains(msg, "has user 3"), msg);
  }
  {
    const std::string d = scratch_copy("lab_overlap");
    rewrite_labels(d, "1 1 5 11 50\n1 1 7 50 60\n");
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, "labels.txt:2:"), msg);
    CHECK_MESSAGE(contains(msg, "overlaps the segment on line 1 at row 50"), msg);
  }
  {
    const std::string d = scratch_copy("lab_noexp");
    rewrite_labels(d, "1 1 5 11 50\n9 4 1 1 10\n");
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, "labels.txt:2:"), msg);
    CHECK_MESSAGE(contains(msg, "experiment 9 has no acc/gyro files"), msg);
  }
  {
    const std::string d = scratch_copy("nogyro");
    std::remove((d + "/gyro_exp02_user02.txt").c_str());
    const std::string msg = error_text<std::runtime_error>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, "no gyro partner"), msg);
    CHECK_MESSAGE(contains(msg, "gyro_exp02_user02.txt"), msg);
  }
  {
    const std::string d = scratch_copy("mismatch_dir");
    moca::data::test::write_text(d + "/gyro_exp03_user02.txt", "1 2 3\n");
    const std::string msg = error_text<std::invalid_argument>([&] { read_hapt_recordings(d); });
    CHECK_MESSAGE(contains(msg, "acc_exp03_user02.txt' has 80 rows"), msg);
  }
  {
    const std::string d = scratch_copy("nolabels");
    std::remove((d + "/labels.txt").c_str());
    CHECK(contains(error_text<std::runtime_error>([&] { read_hapt_recordings(d); }),
                   "no labels.txt"));
  }
  CHECK(contains(
      error_text<std::runtime_error>([&] { read_hapt_recordings("/nonexistent/moca/hapt"); }),
      "does not exist"));
  {
    const std::string d = moca::data::test::scratch_dir("nofiles");
    rewrite_labels(d, "1 1 5 11 50\n");
    CHECK(contains(error_text<std::runtime_error>([&] { read_hapt_recordings(d); }),
                   "no acc_expXX_userYY"));
  }
}

TEST_CASE("hapt: real data (MOCA_HAPT_DIR) reads 61 recordings with the documented sizes") {
  const std::string dir = moca::data::test::env_dir("MOCA_HAPT_DIR");
  if (dir.empty()) {
    MESSAGE("MOCA_HAPT_DIR unset or missing: real-data HAPT test skipped");
    return;
  }
  const auto recs = read_hapt_recordings(dir);
  REQUIRE(recs.size() == 61);
  long rows = 0;
  std::set<int> subjects;
  std::vector<long> per_id(13, 0);
  for (const auto& r : recs) {
    rows += r.samples();
    subjects.insert(r.subject);
    for (Eigen::Index t = 0; t < r.sample_labels.size(); ++t) ++per_id[r.sample_labels(t)];
  }
  // Known answers from SOURCE.md (row counts) and from summing end - start + 1 per activity over
  // labels.txt with awk (an independent computation).
  CHECK(rows == 1122772);
  CHECK(subjects.size() == 30);
  CHECK(recs[0].experiment == 1);
  CHECK(recs[60].experiment == 61);
  CHECK(recs[60].subject == 30);
  const std::vector<long> expected = {0,     122091, 116707, 107961, 126677, 138105, 136865,
                                      10316, 8029,   12428,  11150,  14418,  10867};
  for (int id = 1; id <= 12; ++id) CHECK(per_id[static_cast<size_t>(id)] == expected[id]);
  CHECK(per_id[0] == rows - 815614);
  // First row of acc_exp01_user01 (SOURCE.md).
  CHECK(std::abs(recs[0].signal(0, 0) - 0.9180555898766518f) < 1e-6f);
  CHECK(std::abs(recs[0].signal(1, 0) + 0.1124999994242935f) < 1e-6f);
  CHECK(std::abs(recs[0].signal(2, 0) - 0.5097222514293852f) < 1e-6f);
  CHECK(std::abs(recs[0].signal(3, 0) + 0.05497787147760391f) < 1e-6f);
  // labels.txt row "1 1 5 250 1232": rows 250..1232 (1-based) are standing.
  CHECK(recs[0].sample_labels(248) == 0);
  CHECK(recs[0].sample_labels(249) == 5);
  CHECK(recs[0].sample_labels(1231) == 5);
  CHECK(recs[0].sample_labels(1232) == 7);
}
