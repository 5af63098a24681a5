#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"

namespace fs = std::filesystem;

TEST_CASE("run_gnuplot: the PNG appears under its name only when gnuplot succeeds") {
  if (!moca::gnuplot_available()) {
    MESSAGE("gnuplot not installed: run_gnuplot not exercised");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / "moca_test_gnuplot";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string script = (dir / "ok.gp").string(), png = (dir / "ok.png").string();
  const std::string tmp = png + ".tmp.png";
  moca::write_output_text(script,
                          "set terminal pngcairo size 200,100\nset output '" + tmp + "'\nplot x\n");
  moca::run_gnuplot(script, tmp, png, "test");
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
  CHECK(!fs::exists(tmp));
  // A failing script: an error naming the caller and the script, no PNG, no temporary file.
  const std::string bad = (dir / "bad.gp").string(), bad_png = (dir / "bad.png").string();
  moca::write_output_text(bad, "set output '" + bad_png + ".tmp.png'\nthis is not gnuplot\n");
  CHECK_THROWS_WITH_AS(moca::run_gnuplot(bad, bad_png + ".tmp.png", bad_png, "who"),
                       doctest::Contains(("who: gnuplot failed on " + bad).c_str()),
                       std::runtime_error);
  CHECK(!fs::exists(bad_png));
  CHECK(!fs::exists(bad_png + ".tmp.png"));
  fs::remove_all(dir);
}
