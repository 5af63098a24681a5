#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "coupling_sweep.hpp"
#include "simulation_study.hpp"

using moca::sim::SimulationStudyOptions;

namespace {
SimulationStudyOptions small(double coupling) {
  SimulationStudyOptions o;
  o.data.selection.dataset.use_env = false;
  o.data.samples = 400;
  o.data.selection.coupling = coupling;
  o.features = {"raw"};
  o.score.pca = 20;
  o.score.draws = 3;
  return o;
}

double score_of(const nlohmann::json& doc, const std::string& part, const std::string& scheme) {
  for (const auto& r : doc["results"]) {
    if (r["part"] != part) continue;
    for (const auto& s : r["schemes"]) {
      if (s["scheme"] == scheme) return s["score"].get<double>();
    }
  }
  FAIL("no score for " << part << " " << scheme);
  return 0;
}
}  // namespace

TEST_CASE("simulation_study: JSON shape, paper values, reproducibility") {
  auto o = small(0.8);
  o.features = {"raw", "patch-mean"};
  o.ratio_sweep = {0.5};
  std::ostringstream out, log;
  const auto doc = moca::sim::run_simulation_study(o, out, log);
  for (const char* key : {"study", "data", "settings", "seed", "paper", "results", "ratio_sweep"}) {
    CHECK(doc.contains(key));
  }
  CHECK(doc["paper"]["cross"] == 0.925);
  CHECK(doc["paper"]["sync"] == 0.835);
  CHECK(doc["results"].size() == 4);  // 2 feature maps x (all, acc->gyro)
  CHECK(doc["results"][0]["comparisons"].size() == 1);
  CHECK(doc["ratio_sweep"].size() == 4);  // 2 maps x 2 schemes at one ratio
  CHECK(doc["ratio_sweep"][0]["spec"] == "cross:ratio=0.5,count=keep-floor");
  for (const auto& r : doc["results"]) {
    for (const auto& s : r["schemes"]) {
      const double v = s["score"].get<double>();
      CHECK(v > 0.0);
      CHECK(v <= 1.0 + 1e-12);
      CHECK(s["ci"][0].get<double>() <= v);
      CHECK(s["values"].size() == 3);
    }
  }
  CHECK(out.str().find("0.925") != std::string::npos);
  std::ostringstream out2, log2;
  const auto again = moca::sim::run_simulation_study(o, out2, log2);
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    for (size_t k = 0; k < doc["results"][i]["schemes"].size(); ++k) {
      CHECK(again["results"][i]["schemes"][k]["values"] ==
            doc["results"][i]["schemes"][k]["values"]);
    }
  }
}

TEST_CASE("simulation_study: the acc->gyro part is at the null level without coupling") {
  // At coupling 0 the generator's gyro is independent of its acc, so the cross-modal canonical
  // correlation is sampling noise: sigma_1 near the Wachter edge of independent views. At
  // coupling 1 the gyro measures the acc's own motion, far above it.
  std::ostringstream out, log;
  const auto d0 = moca::sim::run_simulation_study(small(0.0), out, log);
  const auto d1 = moca::sim::run_simulation_study(small(1.0), out, log);
  double null0 = 0;
  for (const auto& r : d0["results"]) {
    if (r["part"] == "acc->gyro") null0 = r["schemes"][0]["null_level"].get<double>();
  }
  const double c0 = score_of(d0, "acc->gyro", "cross"), c1 = score_of(d1, "acc->gyro", "cross");
  CHECK(std::abs(c0 - null0) < 0.1);
  CHECK(c1 > c0 + 0.1);
}

TEST_CASE("simulation_study option errors") {
  auto o = small(0.5);
  o.features = {"encoder"};  // no encoder map given
  std::ostringstream out, log;
  CHECK_THROWS_AS(moca::sim::run_simulation_study(o, out, log), std::invalid_argument);
  o = small(0.5);
  o.features = {"pixels"};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = small(0.5);
  o.score.draws = 1;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = small(0.5);
  o.ratio = 1.0;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = small(0.5);
  o.ratio_sweep = {0.0};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o = small(0.5);
  o.schemes = {"nonsense"};
  CHECK_THROWS_AS(moca::sim::run_simulation_study(o, out, log), std::invalid_argument);
}

TEST_CASE("coupling_sweep: shape, verdicts, and the cross-modal score rises with coupling") {
  moca::sim::CouplingSweepOptions o;
  o.couplings = {0.0, 1.0};
  o.samples = 400;
  o.features = {"raw"};
  o.score.pca = 20;
  o.score.draws = 3;
  std::ostringstream out, log;
  const auto doc = moca::sim::run_coupling_sweep(o, out, log);
  CHECK(doc["points"].size() == 4);  // 2 couplings x (all, acc->gyro)
  REQUIRE(doc["verdicts"].size() == 2);
  for (const auto& v : doc["verdicts"]) {
    CHECK(v["a_above_b"].size() + v["a_below_b"].size() + v["not_distinguishable"].size() == 2);
  }
  double s0 = -1, s1 = -1;
  for (const auto& p : doc["points"]) {
    if (p["part"] != "acc->gyro") continue;
    (p["coupling"].get<double>() == 0.0 ? s0 : s1) = p["schemes"][0]["score"].get<double>();
  }
  CHECK(s1 > s0 + 0.1);

  o.couplings = {0.5};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o.couplings = {0.0, 1.2};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o.couplings = {0.0, 1.0};
  o.schemes = {"cross"};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  o.schemes = {"cross", "sync"};
  o.features = {"encoder"};
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
}
