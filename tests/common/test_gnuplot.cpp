#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"

namespace fs = std::filesystem;

namespace {

/// A fresh, empty folder `name` in the temporary folder.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Draws `plot x` through run_gnuplot into `dir`/`stem`.png and checks that a PNG appeared under
/// its name and no temporary file is left.
void draw_and_check(const fs::path& dir, const std::string& stem) {
  const std::string script = (dir / (stem + ".gp")).string();
  const std::string png = (dir / (stem + ".png")).string(), tmp = png + ".tmp.png";
  moca::write_output_text(script, "set terminal pngcairo size 200,100\nset output " +
                                      moca::gnuplot_quoted(tmp) + "\nplot x\n");
  moca::run_gnuplot(script, tmp, png, "test");
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  CHECK(std::string(magic + 1, 3) == "PNG");
  CHECK(!fs::exists(tmp));
}

}  // namespace

TEST_CASE("run_gnuplot: the PNG appears under its name only when gnuplot succeeds") {
  if (!moca::gnuplot_available()) {
    MESSAGE("gnuplot not installed: run_gnuplot not exercised");
    return;
  }
  const fs::path dir = fresh_dir("moca_test_gnuplot");
  draw_and_check(dir, "ok");
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

TEST_CASE("run_gnuplot: a script path with a single quote, a space and a $ reaches gnuplot as is") {
  if (!moca::gnuplot_available()) {
    MESSAGE("gnuplot not installed: run_gnuplot not exercised");
    return;
  }
  CHECK(moca::gnuplot_quoted("a'b c") == "'a''b c'");
  // A shell would read `'` as the end of a quoted word and `$HOME` as a variable; the argument
  // vector passes the name untouched (and gnuplot_quoted writes it into the script).
  const fs::path dir = fresh_dir("moca test's $HOME gnuplot");
  draw_and_check(dir, "it's a plot");
  // Output discarded, a failing script's status comes back (gnuplot exits 1 on an error).
  const std::string bad = (dir / "it's bad.gp").string();
  moca::write_output_text(bad, "this is not gnuplot\n");
  CHECK(moca::run_gnuplot_script(bad, moca::GnuplotOutput::kDiscard) != 0);
  CHECK(moca::run_gnuplot_script((dir / "it's a plot.gp").string(),
                                 moca::GnuplotOutput::kDiscard) == 0);
  fs::remove_all(dir);
}

TEST_CASE("gnuplot_available: searches PATH itself") {
  const char* saved = std::getenv("PATH");
  const std::string old = saved != nullptr ? saved : "";
  const fs::path dir = fresh_dir("moca_test_gnuplot_path");
  ::setenv("PATH", dir.string().c_str(), 1);
  CHECK(!moca::gnuplot_available());
  CHECK(moca::run_gnuplot_script((dir / "none.gp").string()) == 127);
  // An executable file named gnuplot in PATH counts; a non-executable one does not.
  const fs::path fake = dir / "gnuplot";
  moca::write_output_text(fake.string(), "#!/bin/sh\nexit 3\n");
  CHECK(!moca::gnuplot_available());
  fs::permissions(fake, fs::perms::owner_all);
  CHECK(moca::gnuplot_available());
  CHECK(moca::run_gnuplot_script((dir / "none.gp").string(), moca::GnuplotOutput::kDiscard) == 3);
  ::setenv("PATH", old.c_str(), 1);
  fs::remove_all(dir);
}
