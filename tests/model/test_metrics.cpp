#include <doctest/doctest.h>

#include <stdexcept>

#include <cmath>

#include "moca/model/metrics.hpp"

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
