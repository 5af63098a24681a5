// masking::score_windows: one scoring run (kcca_score's and moca.score's), its result and JSON.
#include "moca/masking/score_run.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "data_flags.hpp"
#include "field_flags.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/kcca/analysis.hpp"
#include "moca/masking/feature_map.hpp"
#include "schema_options.hpp"

using namespace moca;

namespace {

data::Windows small_windows() {
  data::SyntheticOptions so;
  so.windows = 60;
  so.seed = 4;
  return data::generate_synthetic(so);
}

masking::ScoreRunOptions small_options() {
  masking::ScoreRunOptions o;
  o.schemes = {"cross", "sync:ratio=0.5", "random"};
  o.score.draws = 3;
  o.score.pca = 4;
  return o;
}

}  // namespace

TEST_CASE("score_windows: every policy scored, every pair compared, the data described") {
  const auto w = small_windows();
  std::vector<std::string> lines;
  const auto run = masking::score_windows(w, {{"origin", "test"}}, small_options(),
                                          [&](const std::string& l) { lines.push_back(l); });
  CHECK(run.windows == 60);
  CHECK(run.grid.channels == 6);
  CHECK(run.grid.patches == 10);
  CHECK(run.features == "raw");
  CHECK(run.score.mask_mode == masking::MaskMode::kPerWindow);  // auto, no feature map
  REQUIRE(run.scores.size() == 3u);
  CHECK(run.scores[1].spec == "sync:ratio=0.5,count=keep-floor");
  CHECK(run.scores[2].spec == "random:ratio=0.75,count=keep-floor");  // the run's ratio fills in
  REQUIRE(run.comparisons.size() == 3u);
  CHECK(run.comparisons[2].a == run.scores[1].spec);
  CHECK(run.comparisons[2].b == run.scores[2].spec);
  CHECK(run.data["origin"] == "test");
  CHECK(run.data["source"] == "windows");  // added when the caller gives none
  CHECK(run.data["channels"].size() == 6u);
  const auto j = masking::to_json(run);
  CHECK(j["settings"]["grid"]["patches"] == 10);
  CHECK(j["settings"]["mask_mode"] == "per-window");
  CHECK(j["settings"]["views"] == "all channels");
  CHECK(j["schemes"].size() == 3u);
  CHECK(j["comparisons"].size() == 3u);
  CHECK(j["seed"] == 0);
  CHECK_FALSE(j["settings"].contains("samples"));  // the data selection is the caller's
  const auto again = masking::score_windows(w, {}, small_options());
  CHECK(again.scores[0].values == run.scores[0].values);  // same seed, same numbers
}

TEST_CASE("score_windows: mask mode auto follows the feature map; cross-modal views") {
  const auto w = small_windows();
  auto o = small_options();
  o.schemes = {"cross"};
  o.feature_map = masking::make_feature_map("patch-mean");
  CHECK(masking::effective_mask_mode(o) == masking::MaskMode::kShared);
  masking::set_mask_mode(o, "per-window");
  CHECK(o.mask_mode == masking::MaskModeChoice::kPerWindow);
  CHECK(masking::effective_mask_mode(o) == masking::MaskMode::kPerWindow);
  masking::set_mask_mode(o, "auto");
  CHECK(masking::score_windows(w, {}, o).score.mask_mode == masking::MaskMode::kShared);
  o = small_options();
  o.cross_modal = true;
  const auto run = masking::score_windows(w, {}, o);
  CHECK(run.views == "unmasked channels 0,1,2 vs masked channels 3,4,5 (cross-modal part)");
}

TEST_CASE("score_windows: errors name the option") {
  const auto w = small_windows();
  auto o = small_options();
  o.patch_length = 30;
  CHECK_THROWS_WITH_AS(masking::score_windows(w, {}, o),
                       "ScoreRunOptions::patch_length (30) must divide the window length 200 (1, "
                       "2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 200)",
                       std::invalid_argument);
  // the window's own length, not the default 200: 40 divides 200 but not 100
  CHECK_THROWS_WITH_AS(masking::check_patch_length(40, 100),
                       "ScoreRunOptions::patch_length (40) must divide the window length 100 (1, "
                       "2, 4, 5, 10, 20, 25, 50, 100)",
                       std::invalid_argument);
  CHECK_NOTHROW(masking::check_patch_length(25, 100));
  CHECK_THROWS_AS(masking::check_patch_length(0, 100), std::invalid_argument);
  o = small_options();
  o.schemes.clear();
  CHECK_THROWS_AS(masking::score_windows(w, {}, o), std::invalid_argument);
  o = small_options();
  o.ratio = 1.0;
  CHECK_THROWS_WITH_AS(o.validate(), "ScoreRunOptions::ratio (1) must be in (0, 1)",
                       std::invalid_argument);
  o = small_options();
  o.features = masking::FeatureKind::kEncoder;
  CHECK_THROWS_WITH_AS(o.validate(),
                       "ScoreRunOptions::features (encoder) needs feature_map (a trained encoder)",
                       std::invalid_argument);
  o = small_options();
  o.cross_modal = true;
  o.features = masking::FeatureKind::kRffMean;
  CHECK_THROWS_WITH_AS(
      masking::score_windows(w, {}, o),
      "ScoreRunOptions::cross_modal needs per-channel features (raw, patch-mean), not rff-mean",
      std::invalid_argument);
  CHECK_THROWS_AS(masking::set_mask_mode(o, "sometimes"), std::invalid_argument);
  // an unknown policy is refused by validate(), before data, listing the registry's names
  o = small_options();
  o.schemes = {"cross", "bogus:ratio=0.5"};
  CHECK_THROWS_WITH_AS(o.validate(),
                       doctest::Contains("ScoreRunOptions::schemes (bogus) must be one of: "
                                         "cross, random, sync"),
                       std::invalid_argument);
  o.schemes = {"cross", "sync:ratio=0.5"};  // control: known names pass
  CHECK_NOTHROW(o.validate());
}

TEST_CASE("the programs name the flag where the library names the field (field_flags.hpp)") {
  auto o = small_options();
  o.ratio = 1.0;
  std::string text;
  try {
    o.validate();
  } catch (const std::invalid_argument& e) {
    text = e.what();
  }
  CHECK(text == "ScoreRunOptions::ratio (1) must be in (0, 1)");
  // kcca_score's flags come from the schema, whose rows register their fields (here as
  // kcca_score adds them)
  masking::ScoreRunOptions flags;
  CLI::App app{"t"};
  tools::add_schema_options(&app, flags, kEveryScope);
  CHECK(tools::with_flag_names(text) == "--ratio (1) must be in (0, 1)");
  CHECK(tools::with_flag_names("ScoreOptions::draws (1) must be >= 2") ==
        "--draws (1) must be >= 2");
  // Whole names only; every occurrence; other text untouched (the kcca tool's rows registered,
  // as it adds them).
  kcca::AnalysisOptions analysis;
  CLI::App kcca_app{"k"};
  tools::add_schema_options(&kcca_app, analysis, kEveryScope);
  CHECK(tools::with_flag_names("AnalysisOptions::gamma_u (0) and AnalysisOptions::gamma (0)") ==
        "--gamma-u (0) and --gamma (0)");
  CHECK(tools::with_flag_names("AnalysisOptions::gamma_m: 'a' is named twice") ==
        "--gamma-m: 'a' is named twice");
  CHECK(tools::with_flag_names("AnalysisOptions::gamma_mx, X::AnalysisOptions::gamma_m") ==
        "AnalysisOptions::gamma_mx, X::AnalysisOptions::gamma_m");
  CHECK(tools::with_flag_names("pca (2) needs AnalysisOptions::cca") == "pca (2) needs --cca");
  // Fields outside the table: `XOptions::a_b` is `--a-b` where the program has that flag, and
  // stays as it is where it has not (or no program is given).
  const auto has = [](const std::string& flag) { return flag == "--batch-size"; };
  CHECK(tools::with_flag_names("StudyOptions::batch_size (0) must be >= 1", has) ==
        "--batch-size (0) must be >= 1");
  CHECK(tools::with_flag_names("StudyOptions::lr (0) must be > 0", has) ==
        "StudyOptions::lr (0) must be > 0");
  CHECK(tools::with_flag_names("StudyOptions::batch_size (0)") == "StudyOptions::batch_size (0)");
  CHECK(tools::with_flag_names("Study::batch_size and StudyOptions::batch_sizes", has) ==
        "Study::batch_size and StudyOptions::batch_sizes");
  // A table row applies where the program has its flag: ScoreRunOptions::schemes is --scheme
  // where that is a flag, and the rule's --schemes where only that is.
  const auto score_flags = [](const std::string& flag) { return flag == "--scheme"; };
  const auto other_flags = [](const std::string& flag) { return flag == "--schemes"; };
  CHECK(tools::with_flag_names("ScoreRunOptions::schemes (x)", score_flags) == "--scheme (x)");
  CHECK(tools::with_flag_names("ScoreRunOptions::schemes (x)", other_flags) == "--schemes (x)");
  CHECK(tools::with_flag_names("ScoreRunOptions::schemes (x)") == "--scheme (x)");
  // Without a schema registration, PretrainOptions::batch_size is a study's --batch-size.
  CHECK(tools::with_flag_names("PretrainOptions::batch_size (0)", has) == "--batch-size (0)");
  // A field a schema row registered (add_schema_options does) wins over the table and the rule.
  tools::add_field_flag("ToyOptions::batch_size", "--toy-batch");
  CHECK(tools::with_flag_names("ToyOptions::batch_size (0)", has) == "--toy-batch (0)");
  CHECK(tools::with_flag_names("ToyOptions::batch_sizes (0)", has) ==
        "ToyOptions::batch_sizes (0)");
}

TEST_CASE("the data flags come from DataOptions::schema, in the program's scope") {
  data::DataOptions o;
  CLI::App app{"t"};
  tools::add_data_flags(&app, o, data::kDataSourceScope | data::kGeneratorScope);
  // The scope's rows and no others (the split and moca's generator rows are out of scope).
  for (const char* flag :
       {"--data", "--data-format", "--modalities", "--sample-rate", "--drop-nonfinite",
        "--keep-classes", "--channel-names", "--segment", "--npy-layout", "--coupling"}) {
    CAPTURE(flag);
    CHECK(app.get_option_no_throw(flag) != nullptr);
  }
  for (const char* flag : {"--split", "--split-seed", "--folds", "--window-length"}) {
    CAPTURE(flag);
    CHECK(app.get_option_no_throw(flag) == nullptr);
  }
  app.parse("--data-format npy --data npy:/d --coupling 0.25 --channel-names a,b", false);
  CHECK(o.data == "npy:/d");
  CHECK(o.dataset.format == data::DataFormat::kNpy);
  CHECK(o.coupling == 0.25);
  CHECK(o.dataset.channel_names == std::vector<std::string>{"a", "b"});
  // The rows' checks, in the program's words: the added rows registered their flags.
  o.dataset.sample_rate_hz = -1;
  std::string text;
  try {
    o.validate();
  } catch (const std::invalid_argument& e) {
    text = e.what();
  }
  CHECK(text == "DatasetOptions::sample_rate (-1) must be >= 0");
  CHECK(tools::with_flag_names(text) == "--sample-rate (-1) must be >= 0");
  // Control: in range, no message.
  o.dataset.sample_rate_hz = 30;
  CHECK_NOTHROW(o.validate());
  o.fold = 5;
  CHECK_THROWS_WITH_AS(o.validate(), "DataOptions::fold (5) must be < DataOptions::folds (5)",
                       std::invalid_argument);
}
