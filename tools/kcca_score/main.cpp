// kcca_score: score masking schemes by the canonical correlation between the unmasked and the
// masked views they create. See docs/masking.md.
#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>

#include "data_flags.hpp"
#include "kcca_score.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#ifdef MOCA_KCCA_SCORE_WITH_TORCH
#include "moca/model/eval/encoder_features.hpp"
#endif

namespace {

// --features encoder: the encoder of `checkpoint` becomes the feature map (a LibTorch build
// only); a checkpoint with other features is a usage error.
void load_encoder(moca::tools::KccaScoreOptions& o, const std::string& checkpoint) {
  if (o.scoring.features != moca::masking::FeatureKind::kEncoder) {
    if (!checkpoint.empty()) {
      throw std::invalid_argument("--checkpoint (" + checkpoint +
                                  ") is only used with --features encoder");
    }
    return;
  }
  if (checkpoint.empty()) {
    throw std::invalid_argument(
        "--features encoder needs --checkpoint F (a model from `moca pretrain`); the other "
        "feature maps are raw, patch-mean, rff-mean");
  }
  if (const std::string w = moca::masking::mask_mode_warning(o.scoring); !w.empty())
    std::cerr << "kcca_score: warning: " << w << "; --mask-mode shared is the leak-free choice\n";
#ifdef MOCA_KCCA_SCORE_WITH_TORCH
  o.scoring.feature_map = moca::model::make_encoder_feature_map(checkpoint);
#else
  throw std::invalid_argument(
      "--features encoder needs moca built with LibTorch (-DMOCA_WITH_TORCH=ON)");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  moca::tools::KccaScoreOptions o;
  std::string checkpoint;
  CLI::App app{
      "kcca_score: score masking schemes by the canonical correlation between the "
      "unmasked and the masked views (PCA + sigma_1(Gamma) or KCCA), with CIs and paired "
      "comparisons"};
  moca::tools::add_data_flags(&app, o.data,
                              moca::data::kDataSourceScope | moca::data::kGeneratorScope |
                                  moca::data::kSplitSeedScope | moca::data::kStreamScope);
  app.add_option_function<std::string>(
         "--scheme",
         [&o](const std::string& text) {
           o.scoring.schemes = moca::masking::split_spec_list(text, "--scheme");
         },
         "comma-separated scheme specs, e.g. cross,sync or cross:ratio=0.5,sensor:keep=1")
      ->default_str("cross,sync");
  moca::tools::add_schema_options(&app, o.scoring, moca::kEveryScope);
  // --transitions, --samples (masking::DataScoreOptions::schema)
  moca::tools::add_schema_options(&app, static_cast<moca::masking::DataScoreOptions&>(o),
                                  moca::kEveryScope);
  app.add_option("--checkpoint", checkpoint, "--features encoder: MoCA checkpoint (moca pretrain)");
  app.add_option("--json", o.json, "write results as JSON to this file");
  // The estimator's and kernel's rows; the split (--split-seed) only picks the windows
  // Algorithm-1 transitions are spliced from.
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::masking::unused_options(o.scoring.score));
    const auto spec = moca::data::resolve_spec(o.data);
    if (o.transitions == 0 || (o.transitions < 0 && spec &&
                               !moca::data::format_entry(spec->format).transitions_by_default)) {
      moca::tools::inert_option(app, "--split-seed",
                                "it splits the windows Algorithm-1 transitions are spliced "
                                "from, and none are scored (--transitions)");
    }
  });
  return moca::tools::run_cli("kcca_score", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    load_encoder(o, checkpoint);
    // --json -: standard output carries the JSON alone, the table goes to stderr.
    moca::tools::run_kcca_score(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
