#include <doctest/doctest.h>

#include <stdexcept>

#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"

using moca::masking::with_default_ratio;

TEST_CASE("with_default_ratio fills the ratio only where a policy takes one and lacks it") {
  CHECK(with_default_ratio("cross", 0.5) == "cross:ratio=0.5");
  CHECK(with_default_ratio("sync:ratio=0.25", 0.5) == "sync:ratio=0.25");
  CHECK(with_default_ratio("sensor:keep=2", 0.5) == "sensor:keep=2");
  CHECK(with_default_ratio("adaptive:beta=5", 0.6) == "adaptive:beta=5,ratio=0.6");
  CHECK(with_default_ratio("adaptive:base=sensor", 0.6) == "adaptive:base=sensor");
  CHECK_THROWS_AS(with_default_ratio("", 0.5), std::invalid_argument);
}

TEST_CASE("masking::to_json and all_comparisons: shape and a hand-computed difference") {
  moca::masking::PolicyScore a, b, c;
  a.scheme = "cross";
  a.spec = "cross:ratio=0.75";
  a.values = {0.9, 0.8, 0.7};
  a.draws = 3;
  a.mean = 0.8;
  b = a;
  b.scheme = "sync";
  b.spec = "sync:ratio=0.75";
  b.values = {0.6, 0.6, 0.6};
  b.mean = 0.6;
  c = b;
  c.spec = "sync:ratio=0.5";
  const auto j = moca::masking::to_json(a);
  for (const char* key : {"scheme", "spec", "score", "std_error", "ci", "null_level", "draws",
                          "values", "null_values", "masked_fraction", "warning", "seconds"}) {
    CHECK(j.contains(key));
  }
  const auto cmp = moca::masking::all_comparisons({a, b, c});
  REQUIRE(cmp.size() == 3);                  // (a,b), (a,c), (b,c)
  CHECK(cmp[0]["a"] == "cross:ratio=0.75");  // specs, not scheme names: b and c are both sync
  CHECK(cmp[1]["b"] == "sync:ratio=0.5");
  CHECK(cmp[0]["test"] == "paired t (Student t, R-1 df)");
  CHECK(std::abs(cmp[0]["difference"].get<double>() - 0.2) < 1e-12);
  CHECK(std::abs(cmp[2]["difference"].get<double>()) < 1e-15);
}
