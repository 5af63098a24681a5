#include <doctest/doctest.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>

#include "moca/common/text_file.hpp"

TEST_CASE("plain and gzip files read line by line; .gz found automatically") {
  const std::string p = "/tmp/moca_test_text.txt";
  std::remove(p.c_str());
  const std::string gz = p + ".gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  const std::string body = "a b\r\nsecond\nlast-without-newline";
  gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
  gzclose(f);
  CHECK(moca::text_file_exists(p));
  moca::TextFileReader r(p);
  std::string line;
  REQUIRE(r.next_line(line));
  CHECK(line == "a b");
  REQUIRE(r.next_line(line));
  CHECK(line == "second");
  REQUIRE(r.next_line(line));
  CHECK(line == "last-without-newline");
  CHECK(r.line_number() == 3);
  CHECK_FALSE(r.next_line(line));
  CHECK(r.path() == gz);
}

TEST_CASE("truncated gzip stream is a runtime error, missing file too") {
  const std::string gz = "/tmp/moca_test_trunc.txt.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  std::string body;
  for (int i = 0; i < 20000; ++i) body += std::to_string(i * 7919 % 10007) + " 1.25 -3.5\n";
  gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
  gzclose(f);
  std::ifstream in(gz, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  in.close();
  std::ofstream(gz, std::ios::binary) << all.substr(0, all.size() / 2);
  moca::TextFileReader r(gz);
  std::string line;
  CHECK_THROWS_AS(
      [&] {
        while (r.next_line(line)) {
        }
      }(),
      std::runtime_error);
  CHECK_THROWS_AS(moca::TextFileReader("/tmp/definitely/not/here.txt"), std::runtime_error);
}
