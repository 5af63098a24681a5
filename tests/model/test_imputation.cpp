#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <sstream>

#include "moca/masking/mask.hpp"
#include "moca/model/eval/imputation.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca::masking::Mask;

TEST_CASE("model imputation keeps observed samples and fills masked ones") {
  const auto w = moca_test::small_windows(6, 31);
  std::vector<Mask> masks;
  for (int i = 0; i < 6; ++i) {
    Mask m(6, 10);
    for (int p = 3; p < 10; ++p)
      for (int c = 0; c < 6; ++c) m.set(c, p, true);
    masks.push_back(m);
  }
  const auto imp = impute_with_model(moca_test::shared_checkpoint(), w, masks);
  for (int i = 0; i < 6; ++i)
    for (int c = 0; c < 6; ++c)
      for (int t = 0; t < 200; ++t) {
        if (t < 60) CHECK(imp(i, c * 200 + t) == w.x(i, c * 200 + t));
      }
  CHECK((imp - w.x).cwiseAbs().maxCoeff() > 0.0f);
  CHECK(imp.allFinite());
  // A batch with mixed visible counts is grouped internally.
  masks[2].set(0, 0, true);
  CHECK(impute_with_model(moca_test::shared_checkpoint(), w, masks).allFinite());
}

TEST_CASE("masked_reconstruction_error: the error over exactly the hidden samples") {
  const auto w = moca_test::small_windows(4, 32);
  Mask m(6, 10);
  for (int p = 7; p < 10; ++p) m.set(1, p, true);  // channel 1, samples 140..199
  const std::vector<Mask> masks(1, m);
  const auto rec = reconstruct_with_model(moca_test::shared_checkpoint(), w, masks);
  // Independent sum over the hidden samples, written out here.
  double se = 0.0, ae = 0.0;
  for (int i = 0; i < 4; ++i)
    for (int t = 140; t < 200; ++t) {
      const double d = static_cast<double>(rec(i, 200 + t)) - w.x(i, 200 + t);
      se += d * d;
      ae += std::abs(d);
    }
  const auto e = masked_reconstruction_error(moca_test::shared_checkpoint(), w, masks);
  CHECK(e.count == 4 * 60);
  CHECK(e.mse == doctest::Approx(se / 240).epsilon(1e-12));
  CHECK(e.mae == doctest::Approx(ae / 240).epsilon(1e-12));
  // Control: a mask that hides nothing has no error to report.
  CHECK_THROWS_AS(masked_reconstruction_error(moca_test::shared_checkpoint(), w,
                                              std::vector<Mask>(1, Mask(6, 10))),
                  std::invalid_argument);
}

TEST_CASE("the imputation table has every method on every task") {
  const auto w = moca_test::small_windows(20, 32);
  ImputeOptions o;
  o.checkpoints = {moca_test::shared_checkpoint()};
  o.labels = {"MoCA (test)"};
  o.mice.iterations = 2;
  o.mice.draws = 2;
  std::ostringstream log;
  const auto t = evaluate_imputation(o, w, log);
  CHECK(t.methods.size() == 4);
  CHECK(t.tasks == std::vector<std::string>{"random:ratio=0.7,count=keep-floor",
                                            "temporal:ratio=0.7,count=keep-floor", "sensor:keep=1",
                                            "extrapolation:ratio=0.7,count=keep-floor"});
  CHECK(t.cells.size() == 16);
  for (const auto& c : t.cells) {
    CHECK(c.applicable);
    CHECK(c.count > 0);
    CHECK(c.mse >= 0.0);
  }
  // Sensor task: 5 of 6 channels hidden in every window.
  for (const auto& c : t.cells)
    if (c.task == "sensor:keep=1") CHECK(c.count == 20L * 5 * 200);
  // nMSE: every cell's MSE over one variance, that of all values of the windows (by hand here).
  double sum = 0.0, sq = 0.0;
  const double n = static_cast<double>(w.x.size());
  for (Eigen::Index i = 0; i < w.x.rows(); ++i)
    for (Eigen::Index j = 0; j < w.x.cols(); ++j) sum += w.x(i, j);
  for (Eigen::Index i = 0; i < w.x.rows(); ++i)
    for (Eigen::Index j = 0; j < w.x.cols(); ++j)
      sq += (w.x(i, j) - sum / n) * (w.x(i, j) - sum / n);
  const double var = sq / (n - 1.0);
  CHECK(std::abs(t.target_variance - var) < 1e-9 * var);
  for (const auto& c : t.cells) CHECK(std::abs(c.nmse - c.mse / var) < 1e-9 * c.nmse);
  const auto text = t.to_text();
  CHECK(text.find("MoCA (test)") != std::string::npos);
  CHECK(text.find("MAE    MSE    nMSE") != std::string::npos);
  const auto j = t.to_json();
  CHECK(j["cells"].size() == 16);
  CHECK(j["cells"][0]["nmse"].get<double>() == t.cells[0].nmse);
  CHECK(j["target_variance"].get<double>() == t.target_variance);
  o.labels = {"a", "b"};
  CHECK_THROWS_AS(evaluate_imputation(o, w, log), std::invalid_argument);
}
