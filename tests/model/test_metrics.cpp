#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include "moca/model/eval/metrics.hpp"
#include "test_support.hpp"

using namespace moca::model;

TEST_CASE("metrics of a hand-worked example") {
  // truth 0 0 1 1 2 2, predicted 0 1 1 1 2 0.
  const auto m = classification_metrics({0, 0, 1, 1, 2, 2}, {0, 1, 1, 1, 2, 0}, 3);
  CHECK(std::abs(m.accuracy - 4.0 / 6.0) < 1e-12);
  // class 0: P 1/2 R 1/2 F1 1/2; class 1: P 2/3 R 1 F1 4/5; class 2: P 1 R 1/2 F1 2/3.
  CHECK(std::abs(m.f1[0] - 0.5) < 1e-12);
  CHECK(std::abs(m.f1[1] - 0.8) < 1e-12);
  CHECK(std::abs(m.f1[2] - 2.0 / 3.0) < 1e-12);
  CHECK(std::abs(m.macro_f1 - (0.5 + 0.8 + 2.0 / 3.0) / 3.0) < 1e-12);
  CHECK(std::abs(m.balanced_accuracy - (0.5 + 1.0 + 0.5) / 3.0) < 1e-12);
  CHECK(m.confusion(0, 1) == 1);
  CHECK(m.confusion(2, 0) == 1);
  CHECK(m.confusion.sum() == 6);
  CHECK(to_json(m)["confusion"][1][1] == 2);
}

TEST_CASE("classes absent from truth and predictions do not dilute the macro averages") {
  const auto m = classification_metrics({0, 1}, {0, 1}, 5);
  CHECK(m.macro_f1 == 1.0);
  CHECK(m.balanced_accuracy == 1.0);
  // A class only predicted counts in macro-F1 (F1 = 0) but not in balanced accuracy.
  const auto k = classification_metrics({0, 0}, {0, 3}, 5);
  CHECK(std::abs(k.macro_f1 - (2.0 / 3.0 + 0.0) / 2.0) < 1e-12);
  CHECK(k.balanced_accuracy == 0.5);
}

TEST_CASE("metric errors and fold summaries") {
  CHECK_THROWS_AS(classification_metrics({0}, {0, 1}, 2), std::invalid_argument);
  CHECK_THROWS_AS(classification_metrics({}, {}, 2), std::invalid_argument);
  CHECK_THROWS_WITH_AS(classification_metrics({0, 5}, {0, 1}, 3), doctest::Contains("outside"),
                       std::invalid_argument);
  const auto s = mean_sd({1, 2, 3, 4});
  CHECK(s.mean == 2.5);
  CHECK(std::abs(s.sd - std::sqrt(5.0 / 3.0)) < 1e-12);
  CHECK(mean_sd({7}).sd == 0.0);
  CHECK_THROWS_AS(mean_sd({}), std::invalid_argument);
}

TEST_CASE("read_predictions_csv and prediction_metrics") {
  const std::string path = moca_test::temp_path("metrics_predictions.csv");
  auto write = [&](const std::string& body) { std::ofstream(path) << body; };
  // Fold 0: truth 0 1 1, predicted 0 1 0; fold 3: truth 2 2, predicted 2 1.
  write("fold,truth,predicted\n0,0,0\n0,1,1\n0,1,0\n3,2,2\n3,2,1\n");
  const Predictions p = read_predictions_csv(path);
  CHECK(p.fold == std::vector<int>{0, 0, 0, 3, 3});
  CHECK(p.truth == std::vector<int>{0, 1, 1, 2, 2});
  CHECK(p.predicted == std::vector<int>{0, 1, 0, 2, 1});
  CHECK(p.max_id() == 2);
  const PredictionMetrics m = prediction_metrics(p);
  CHECK(m.pooled.classes == 3);
  CHECK(m.pooled.n == 5);
  CHECK(std::abs(m.pooled.accuracy - 3.0 / 5.0) < 1e-12);
  REQUIRE(m.fold_ids == std::vector<int>{0, 3});
  CHECK(std::abs(m.folds[0].accuracy - 2.0 / 3.0) < 1e-12);
  CHECK(std::abs(m.folds[1].accuracy - 0.5) < 1e-12);
  CHECK(m.folds[1].confusion(2, 1) == 1);
  CHECK(prediction_metrics(p, 5).pooled.classes == 5);
  // Without a fold column every row is fold 0; one class still gives a two-class matrix.
  write("truth,predicted\n0,0\n0,0\n");
  const PredictionMetrics one = prediction_metrics(read_predictions_csv(path));
  CHECK(one.fold_ids == std::vector<int>{0});
  CHECK(one.pooled.classes == 2);
  CHECK(one.pooled.accuracy == 1.0);
}

TEST_CASE("read_predictions_csv: bad input") {
  const std::string path = moca_test::temp_path("metrics_bad.csv");
  auto message = [&](const std::string& body) {
    std::ofstream(path) << body;
    try {
      read_predictions_csv(path);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no std::invalid_argument");
  };
  CHECK(message("0,1,2,3\n").find("4 columns") != std::string::npos);
  CHECK(message("0\n1\n").find("1 columns") != std::string::npos);
  // Rows are named by their line in the file (1-based, header and blank lines counted), the
  // convention of the CSV reader's own errors.
  CHECK(message("0,1\n1,-1\n") == path + ":2: column 2 (-1) must be a non-negative integer id");
  CHECK(message("0,1,1.5\n") == path + ":1: column 3 (1.5) must be a non-negative integer id");
  CHECK(message("truth,predicted\n0,1\n\n1,2.5\n") ==
        path + ":4: column 2 (2.5) must be a non-negative integer id");
  CHECK(message("truth,predicted\n0,1\n1,x\n") == path + ":3: column 2 is not a number ('x')");
  CHECK_THROWS_AS(read_predictions_csv(moca_test::temp_path("metrics_missing.csv")),
                  std::runtime_error);
}
