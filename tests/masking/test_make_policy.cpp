// Tests for policy_spec.hpp and make_policy.hpp: parsing, canonical round trip, errors.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "moca/masking/make_policy.hpp"
#include "moca/masking/policies.hpp"
#include "moca/masking/policy_spec.hpp"

using namespace moca;
using namespace moca::masking;

namespace {
const Grid kGrid{6, 10, 20};
const data::RowMatrixXf kNoFeatures;

std::string error_of(const std::string& spec) {
  try {
    make_policy(spec, kGrid);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("parse_policy_spec: name and ordered options") {
  auto s = parse_policy_spec("adaptive:base=cross, beta=20 ,candidates=256");
  CHECK(s.name == "adaptive");
  REQUIRE(s.options.size() == 3u);
  CHECK(s.options[1].first == "beta");
  CHECK(s.options[1].second == "20");
  CHECK(*s.find("candidates") == "256");
  CHECK(s.find("ratio") == nullptr);
  CHECK(format_policy_spec(s) == "adaptive:base=cross,beta=20,candidates=256");
  CHECK(parse_policy_spec("cross").options.empty());
  CHECK_THROWS_AS(parse_policy_spec(""), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec(":ratio=1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec("cross:ratio"), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec("cross:ratio="), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec("cross:=1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec("cross:ratio=0.5,"), std::invalid_argument);
  CHECK_THROWS_AS(parse_policy_spec("cross:ratio=0.5,ratio=0.6"), std::invalid_argument);
}

TEST_CASE("format_number is the shortest exact text") {
  CHECK(format_number(0.75) == "0.75");
  CHECK(format_number(0.7) == "0.7");
  CHECK(format_number(20) == "20");
  CHECK(std::stod(format_number(0.1 + 0.2)) == 0.1 + 0.2);
}

TEST_CASE("with_default_ratio fills --ratio only where the policy takes one and lacks it") {
  using moca::masking::with_default_ratio;
  CHECK(with_default_ratio("cross", 0.5) == "cross:ratio=0.5");
  CHECK(with_default_ratio("per-modality:groups=0-2/3-5", 0.25) ==
        "per-modality:groups=0-2/3-5,ratio=0.25");
  CHECK(with_default_ratio("sync:ratio=0.25", 0.5) == "sync:ratio=0.25");
  CHECK(with_default_ratio("sensor:keep=2", 0.5) == "sensor:keep=2");
  CHECK(with_default_ratio("adaptive:base=temporal", 0.6) == "adaptive:base=temporal,ratio=0.6");
  CHECK(with_default_ratio("adaptive:base=sensor", 0.6) == "adaptive:base=sensor");
  CHECK_THROWS_AS(with_default_ratio("cross:ratio", 0.5), std::invalid_argument);
}

TEST_CASE("split_spec_list: key=value items join their spec, spaces trimmed, empties rejected") {
  using V = std::vector<std::string>;
  CHECK(split_spec_list("cross,sync") == V{"cross", "sync"});
  CHECK(split_spec_list("cross:ratio=0.5,adaptive:base=sync,beta=5,sensor:keep=2") ==
        V{"cross:ratio=0.5", "adaptive:base=sync,beta=5", "sensor:keep=2"});
  CHECK(split_spec_list(" cross , sync:ratio=0.5, beta=5 ") == V{"cross", "sync:ratio=0.5,beta=5"});
  CHECK(split_spec_list("raw") == V{"raw"});
  // k=v with no spec with options before it is an item of its own (make_policy rejects it).
  CHECK(split_spec_list("ratio=0.5,cross") == V{"ratio=0.5", "cross"});
  auto error_of_list = [](const std::string& text) {
    try {
      split_spec_list(text, "--scheme");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of_list("") == "--scheme: the list is empty");
  CHECK(error_of_list("  ") == "--scheme: the list is empty");
  CHECK(error_of_list("cross,,sync") == "--scheme: empty item in 'cross,,sync'");
  CHECK(error_of_list("cross,") == "--scheme: empty item in 'cross,'");
  CHECK(error_of_list(",cross") == "--scheme: empty item in ',cross'");
}

TEST_CASE("make_policy: defaults, canonical specs, round trip") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cross", "cross:ratio=0.75,count=keep-floor"},
      {"cross:ratio=0.5", "cross:ratio=0.5,count=keep-floor"},
      {"random", "random:ratio=0.7,count=keep-floor"},
      {"sync", "sync:ratio=0.75,count=keep-floor"},
      {"temporal:count=mask-floor", "temporal:ratio=0.7,count=mask-floor"},
      {"extrapolation:ratio=0.3", "extrapolation:ratio=0.3,count=keep-floor"},
      {"sensor", "sensor:keep=1"},
      {"sensor:keep=3", "sensor:keep=3"},
      {"per-modality", "per-modality:ratio=0.75,count=keep-floor,groups=0-2/3-5"},
      {"per-modality:groups=0+1/2-5,count=mask-floor,ratio=0.5",
       "per-modality:ratio=0.5,count=mask-floor,groups=0-1/2-5"},
      {"fixed:cells=1000000000/0000000000/0000000000/0000000000/0000000000/0000000001",
       "fixed:cells=1000000000/0000000000/0000000000/0000000000/0000000000/0000000001"},
  };
  for (const auto& [in, canon] : cases) {
    auto p = make_policy(in, kGrid);
    CHECK(p->spec() == canon);
    auto q = make_policy(p->spec(), kGrid);
    CHECK(q->spec() == canon);
    CHECK(q->name() == p->name());
    Rng r1(4), r2(4);
    for (int i = 0; i < 5; ++i) CHECK(p->sample(r1, kNoFeatures) == q->sample(r2, kNoFeatures));
  }
}

TEST_CASE("make_policy: fixed from a file") {
  const std::string path = std::string(MOCA_BINARY_DIR) + "/test_fixed_mask.txt";
  {
    std::ofstream f(path);
    f << "1100000000\n0000000000\n0000000000\n0000000000\n0000000000\n0000000011\n";
  }
  auto p = make_policy("fixed:file=" + path, kGrid);
  CHECK(p->spec() == "fixed:file=" + path);
  Rng rng(1);
  CHECK(p->sample(rng, kNoFeatures).masked_count() == 4);
  std::remove(path.c_str());
  CHECK_THROWS_AS(make_policy("fixed:file=" + path, kGrid), std::invalid_argument);
}

TEST_CASE("make_policy: errors name the problem and list valid values") {
  CHECK(error_of("crosss").find("valid: cross, random, sync") != std::string::npos);
  CHECK(error_of("cross:ratio=0.5,keep=1").find("valid keys: ratio, count") != std::string::npos);
  CHECK(error_of("sensor:ratio=0.5").find("valid keys: keep") != std::string::npos);
  CHECK(error_of("cross:ratio=abc").find("not a number") != std::string::npos);
  CHECK(error_of("cross:ratio=1.5").find("(0, 1)") != std::string::npos);
  CHECK(error_of("sync:ratio=0.05,count=mask-floor").find("masks 0 of 10 columns") !=
        std::string::npos);
  CHECK(error_of("sensor:keep=6").find("[1, C-1]") != std::string::npos);
  CHECK(error_of("sensor:keep=1.5").find("not an integer") != std::string::npos);
  CHECK(error_of("per-modality:groups=0-7").find("out of range") != std::string::npos);
  CHECK(error_of("fixed").find("exactly one of") != std::string::npos);
  CHECK(error_of("fixed:cells=0101").find("grid is 6 x 10") != std::string::npos);
  CHECK(error_of("fixed:cells=01/0x").find("character") != std::string::npos);
}

TEST_CASE("policy registry: every row builds, and --ratio applies exactly where its row says") {
  std::set<std::string> seen;
  for (const PolicyEntry& row : policy_registry()) {
    INFO(std::string(row.name));
    CHECK(seen.insert(row.name).second);  // names are unique
    CHECK(find_policy(row.name) == &row);
    const std::string filled = with_default_ratio(row.name, 0.5);
    CHECK((filled.find("ratio=0.5") != std::string::npos) == (row.ratio != RatioRule::kNone));
    if (row.ratio != RatioRule::kOwn) continue;
    // A policy with its own ratio 0.5 on a 6 x 10 grid masks 30 of 60 cells (cell policies; 5 of
    // 10 columns in all 6 channels for column policies), whatever the seed; per-modality masks 5
    // columns of one 3-channel group: 15 (docs/masking.md's table).
    PolicyContext context;
    context.modalities = {{0, 1, 2}, {3, 4, 5}};
    const auto p = make_policy(filled, kGrid, context);
    CHECK(p->name() == row.name);
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      Rng rng(seed);
      const int expected = std::string(row.name) == "per-modality" ? 15 : 30;
      CHECK(p->sample(rng, kNoFeatures).masked_count() == expected);
    }
  }
  CHECK(seen.size() == policy_names().size());
  CHECK(find_policy("bogus") == nullptr);
  // adaptive takes --ratio through its base: none for a sensor base.
  CHECK(with_default_ratio("adaptive:base=sensor", 0.5).find("ratio") == std::string::npos);
  CHECK(with_default_ratio("adaptive:base=sync", 0.5).find("ratio=0.5") != std::string::npos);
}
