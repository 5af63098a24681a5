#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "moca/common/matrix_io.hpp"

namespace {
std::string tmp_path(const std::string& name) {
  return "/tmp/moca_test_io_" + name;
}
void write(const std::string& path, const std::string& s) {
  std::ofstream(path) << s;
}
}  // namespace

TEST_CASE("CSV with and without header") {
  const auto p = tmp_path("a.csv");
  write(p, "u1,u2\n1,2\n3.5,-4e-1\n\n");
  std::vector<std::string> header;
  const auto m = moca::read_csv_matrix(p, &header);
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 2);
  CHECK(m(1, 0) == 3.5);
  CHECK(m(1, 1) == -0.4);
  CHECK(header == std::vector<std::string>{"u1", "u2"});
  write(p, "1,2,3\n4,5,6\n");
  CHECK(moca::read_csv_matrix(p).cols() == 3);
}

TEST_CASE("CSV rows' line numbers: 1-based, header and blank lines counted") {
  const auto p = tmp_path("lines.csv");
  std::vector<long> lines;
  write(p, "u1,u2\n1,2\n\n3,4\n\n5,6\n");
  CHECK(moca::read_csv_matrix(p, nullptr, &lines).rows() == 3);
  CHECK(lines == std::vector<long>{2, 4, 6});
  // A quoted cell and a blank line before the second row.
  write(p, "\"1\",2\n\n3,4\n");
  CHECK(moca::read_csv_matrix(p, nullptr, &lines).rows() == 2);
  CHECK(lines == std::vector<long>{1, 3});
}

TEST_CASE("CSV fast reader: the numbers strtod gives, for every cell form the format allows") {
  // Cells with a leading '+', hex floats (from_chars takes neither: the strtod fallback), quotes,
  // padding, ';' separators and 17-digit decimals; every value must equal strtod's.
  const auto p = tmp_path("forms.csv");
  const std::vector<std::string> cells = {
      "+1.5", "0x1.8p1", "\"2.25\"", " \t-3e-2 ", "0.30000000000000004", "1e-310", "-0", "7"};
  std::string row;
  for (size_t i = 0; i < cells.size(); ++i) row += (i ? (i % 2 ? ";" : ",") : "") + cells[i];
  write(p, "a;b,c;d,e;f,g;h\n" + row + "\n" + row + "\n");
  std::vector<std::string> header;
  const auto m = moca::read_csv_matrix(p, &header);
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == static_cast<Eigen::Index>(cells.size()));
  CHECK(header.size() == cells.size());
  const double expect[] = {1.5,
                           3.0,
                           2.25,
                           -3e-2,
                           std::strtod("0.30000000000000004", nullptr),
                           std::strtod("1e-310", nullptr),
                           -0.0,
                           7.0};
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    CHECK(m(0, j) == expect[j]);
    CHECK(m(1, j) == expect[j]);
  }
  // An all-numeric first row with a non-finite value is data, not a header: an error.
  write(p, "inf,1\n2,3\n");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains(":1: column 1"),
                       std::invalid_argument);
  // "1 2" is not one number.
  write(p, "1,2\n1 2,3\n");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains(":2: column 1"),
                       std::invalid_argument);
}

TEST_CASE("CSV errors name file, line and rule") {
  const auto p = tmp_path("bad.csv");
  write(p, "1,2\n3\n");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains("ragged"),
                       std::invalid_argument);
  write(p, "1,2\n3,abc\n");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains(":2: column 2"),
                       std::invalid_argument);
  write(p, "1,nan\n");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains("finite"),
                       std::invalid_argument);
  write(p, "");
  CHECK_THROWS_WITH_AS(moca::read_csv_matrix(p), doctest::Contains("no data rows"),
                       std::invalid_argument);
  CHECK_THROWS_AS(moca::read_csv_matrix(tmp_path("missing.csv")), std::runtime_error);
}

TEST_CASE("NPY round trip, float32 and int64, 3-D") {
  const auto p = tmp_path("x.npy");
  std::vector<double> d(2 * 3 * 4);
  for (size_t i = 0; i < d.size(); ++i) d[i] = 0.5 * static_cast<double>(i) - 3;
  moca::write_npy(p, {2, 3, 4}, d.data());
  auto a = moca::read_npy(p);
  CHECK(a.shape == std::vector<std::int64_t>{2, 3, 4});
  CHECK(a.dtype == "<f8");
  CHECK(a.data == d);
  moca::write_npy(p, {2, 3, 4}, d.data(), true);
  a = moca::read_npy(p);
  CHECK(a.dtype == "<f4");
  CHECK(a.data == d);  // all values exactly representable in float
  std::vector<std::int64_t> iv = {5, -1, 7};
  moca::write_npy_int(p, {3}, iv.data());
  a = moca::read_npy(p);
  CHECK(a.shape == std::vector<std::int64_t>{3});
  CHECK(a.data[1] == -1.0);
  const auto m = moca::read_npy_matrix(p);
  CHECK(m.rows() == 3);
  CHECK(m.cols() == 1);
}

TEST_CASE("NPY header written by NumPy (fortran order) is read in C order") {
  // Bytes of np.save(f, np.asfortranarray(np.arange(6.).reshape(2, 3))), header as NumPy writes.
  const auto p = tmp_path("f.npy");
  std::string header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream o(p, std::ios::binary);
  o.write("\x93NUMPY\x01\x00", 8);
  const char hl[2] = {static_cast<char>(header.size()), 0};
  o.write(hl, 2);
  o << header;
  const double colmajor[6] = {0, 3, 1, 4, 2, 5};
  o.write(reinterpret_cast<const char*>(colmajor), sizeof colmajor);
  o.close();
  const auto m = moca::read_npy_matrix(p);
  REQUIRE(m.rows() == 2);
  CHECK(m(0, 1) == 1.0);
  CHECK(m(1, 0) == 3.0);
  CHECK(m(1, 2) == 5.0);
}

TEST_CASE("NPY headers that claim more than the file holds are rejected before allocating") {
  // Found by fuzz_npy (the inputs are in fuzz/corpus/npy/regress-*).
  auto npy = [](const std::string& path, const std::string& descr, const std::string& shape,
                const std::string& payload) {
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream o(path, std::ios::binary);
    o.write("\x93NUMPY\x01\x00", 8);
    const char hl[2] = {static_cast<char>(header.size() & 0xff),
                        static_cast<char>(header.size() >> 8)};
    o.write(hl, 2);
    o << header << payload;
  };
  const auto p = tmp_path("claims.npy");
  npy(p, "<f8", "(4000000000000, 3)", std::string(48, '\0'));
  CHECK_THROWS_WITH_AS(moca::read_npy(p), doctest::Contains("the file holds 48 bytes"),
                       std::invalid_argument);
  npy(p, "<f8", "(9223372036854775807, 9223372036854775807)", "");
  CHECK_THROWS_WITH_AS(moca::read_npy(p), doctest::Contains("shape too large"),
                       std::invalid_argument);
  npy(p, "<U0", "(1000000000000,)", "");
  CHECK_THROWS_WITH_AS(moca::read_npy(p), doctest::Contains("bad string dtype"),
                       std::invalid_argument);
  npy(p, "<U1", "(2,)", std::string("a\0\0\0b\0\0\0", 8));
  CHECK(moca::read_npy(p).strings == std::vector<std::string>{"a", "b"});
  CHECK_THROWS_WITH_AS(moca::read_npy_matrix(p), doctest::Contains("got strings"),
                       std::invalid_argument);
}

TEST_CASE("NPY errors") {
  const auto p = tmp_path("bad.npy");
  write(p, "not numpy at all");
  CHECK_THROWS_WITH_AS(moca::read_npy(p), doctest::Contains("magic"), std::invalid_argument);
  std::vector<double> d(10, 1.0);
  moca::write_npy(p, {10}, d.data());
  {  // truncate the data
    std::ifstream in(p, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    write(p, all.substr(0, all.size() - 8));
  }
  CHECK_THROWS_WITH_AS(moca::read_npy(p), doctest::Contains("truncated"), std::invalid_argument);
}
