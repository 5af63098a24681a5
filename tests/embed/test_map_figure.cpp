#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moca/common/gnuplot.hpp"
#include "moca/embed/map_figure.hpp"

using namespace moca::embed;

namespace {
std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("write_map_figure: one block per (map, class), colours by class name") {
  MapPanel a{"first", Eigen::MatrixXd(3, 2), {"walk", "sit", "walk"}};
  a.coords << 0, 1, 2, 3, 4, 5;
  MapPanel b{"second", Eigen::MatrixXd(2, 2), {"lay", "sit"}};
  b.coords << 6, 7, 8, 9;
  const std::string prefix = std::string(MOCA_BINARY_DIR) + "/test_map_figure";
  const bool png = moca::gnuplot_available();
  const MapFigureFiles f = write_map_figure({a, b}, prefix, "maps", png);
  const std::string dat = slurp(f.dat), gp = slurp(f.script);
  // classes sorted: lay, sit, walk -> map 0's walk block holds both walk points.
  CHECK(dat.find("# first / walk\n0\t1\n4\t5\n") != std::string::npos);
  CHECK(dat.find("# first / lay\nNaN\tNaN\n") != std::string::npos);
  CHECK(gp.find("index 0 ") == std::string::npos);  // map 0 has no "lay" point: not drawn
  CHECK(dat.find("# second / sit\n8\t9\n") != std::string::npos);
  CHECK(gp.find("index 2 using 1:2 with points pt 7 ps 0.45 lc rgb '#2ca02c' title 'walk'") !=
        std::string::npos);
  if (png) {
    std::ifstream f_png(f.png, std::ios::binary);
    char magic[4] = {};
    f_png.read(magic, 4);
    CHECK(std::string(magic + 1, 3) == "PNG");
  }
  MapPanel bad{"bad", Eigen::MatrixXd(2, 2), {"x"}};
  CHECK_THROWS_AS(write_map_figure({bad}, prefix, "x", false), std::invalid_argument);
  CHECK_THROWS_AS(write_map_figure({}, prefix, "x", false), std::invalid_argument);
}
