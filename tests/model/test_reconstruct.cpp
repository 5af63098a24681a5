#include <doctest/doctest.h>

#include <stdexcept>

#include <cmath>
#include <fstream>
#include <sstream>

#include "moca/common/matrix_io.hpp"
#include "moca/model/eval/reconstruct.hpp"
#include "test_support.hpp"

using namespace moca::model;

namespace {
// Window `window` under temporal masking at 0.5 into temp file `name` (PNG when gnuplot is
// installed).
ReconstructOptions temporal_options(int window, const std::string& name) {
  ReconstructOptions o;
  o.checkpoint = moca_test::shared_checkpoint();
  o.window = window;
  o.policy = "temporal:ratio=0.5";
  o.out = moca_test::temp_path(name);
  o.png = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  return o;
}
}  // namespace

TEST_CASE("reconstruct writes a CSV (and a PNG) whose errors match the report") {
  const auto w = moca_test::small_windows(5, 51);
  ReconstructOptions o = temporal_options(2, "recon");
  std::ostringstream log;
  const auto r = reconstruct_window(o, w, log);
  CHECK(r.masked_samples == 6L * 5 * 20);
  std::vector<std::string> header;
  const Eigen::MatrixXd csv = moca::read_csv_matrix(r.csv, &header);
  REQUIRE(csv.rows() == 200);
  REQUIRE(csv.cols() == 1 + 3 * 6);
  CHECK(header[1] == "acc_x");
  CHECK(header[2] == "acc_x_rec");
  double abs_sum = 0.0;
  long n = 0;
  for (int t = 0; t < 200; ++t)
    for (int c = 0; c < 6; ++c) {
      CHECK(std::abs(csv(t, 1 + 3 * c) - w.x(2, c * 200 + t)) < 1e-6);
      if (csv(t, 3 + 3 * c) == 1.0) {
        abs_sum += std::abs(csv(t, 2 + 3 * c) - csv(t, 1 + 3 * c));
        ++n;
      }
    }
  CHECK(n == r.masked_samples);
  CHECK(std::abs(abs_sum / n - r.mae_masked) < 1e-5);
  if (o.png) {
    std::ifstream png(r.png, std::ios::binary);
    char magic[4] = {};
    png.read(magic, 4);
    CHECK(magic[1] == 'P');
    CHECK(magic[2] == 'N');
  } else {
    MESSAGE("gnuplot not installed: PNG not checked");
  }
  o.window = 5;
  CHECK_THROWS_WITH_AS(reconstruct_window(o, w, log), doctest::Contains("window"),
                       std::invalid_argument);
}

TEST_CASE("reconstruct --baselines: linear, nearest and MICE beside the model on the same mask") {
  const auto w = moca_test::small_windows(3, 52);
  ReconstructOptions o = temporal_options(1, "recon_baselines");
  o.baselines = true;
  o.mice.iterations = 2;
  o.mice.draws = 1;
  std::ostringstream log;
  const auto r = reconstruct_window(o, w, log);
  std::vector<std::string> header;
  const Eigen::MatrixXd csv = moca::read_csv_matrix(r.csv, &header);
  REQUIRE(csv.cols() == 1 + 3 * 6 + 3 * 6);
  CHECK(header[19] == "acc_x_linear");
  CHECK(header[25] == "acc_x_nearest");
  CHECK(header[31] == "acc_x_mice");
  REQUIRE(r.baselines.size() == 3);
  for (int b = 0; b < 3; ++b) {
    double abs_sum = 0.0;
    long n = 0;
    for (int t = 0; t < 200; ++t)
      for (int c = 0; c < 6; ++c) {
        const double v = csv(t, 19 + 6 * b + c), x = csv(t, 1 + 3 * c);
        if (csv(t, 3 + 3 * c) == 1.0) {
          abs_sum += std::abs(v - x);
          ++n;
        } else {
          CHECK(std::abs(v - x) < 1e-6);  // observed samples are kept
        }
      }
    CHECK(n == r.masked_samples);
    CHECK(std::abs(abs_sum / n - r.baselines[static_cast<size_t>(b)].second.mae) < 1e-5);
  }
  // Linear interpolation by hand inside a masked run: between the last observed sample before
  // it and the first after it (a masked patch with observed neighbours on both sides).
  for (int c = 0; c < 6; ++c)
    for (int p = 1; p + 1 < 10; ++p) {
      if (!r.mask.masked(c, p) || r.mask.masked(c, p - 1)) continue;
      int q = p;
      while (q < 10 && r.mask.masked(c, q)) ++q;
      if (q == 10) continue;
      const int t0 = p * 20 - 1, t1 = q * 20, t = p * 20 + 3;
      const double want = csv(t0, 1 + 3 * c) + (csv(t1, 1 + 3 * c) - csv(t0, 1 + 3 * c)) *
                                                   (t - t0) / static_cast<double>(t1 - t0);
      CHECK(std::abs(csv(t, 19 + c) - want) < 1e-5);
    }
}
