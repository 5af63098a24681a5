// simulation_study: the paper's simulation study (sigma_1 of cross vs sync masking on synthetic
// transitions), with CIs over mask draws. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "enum_option.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "simulation_study.hpp"
#include "study_flags.hpp"
#ifdef MOCA_STUDIES_WITH_TORCH
#include "moca/model/eval/encoder_features.hpp"
#endif

int main(int argc, char** argv) {
  moca::sim::SimulationStudyOptions o;
  std::string schemes = "cross,sync", features = "raw,patch-mean", checkpoint;
  CLI::App app{
      "simulation_study: sigma_1(Gamma) of cross vs synchronised masking on synthetic "
      "transitions (the paper's simulation study), with CIs over mask draws"};
  moca::sim::add_study_data_flags(&app, o.data, "synthetic transitions",
                                  "seed of Algorithm 1 / the generator");
  app.add_option("--scheme", schemes, "comma-separated policy specs")->capture_default_str();
  app.add_option("--ratio", o.ratio, "mask ratio for specs without one")->capture_default_str();
  app.add_option("--features", features, "comma-separated: raw, patch-mean, encoder")
      ->capture_default_str();
  app.add_option("--checkpoint", checkpoint, "pre-trained MoCA checkpoint (for encoder features)");
  moca::tools::add_enum_option(&app, "--estimator", o.score.estimator,
                               moca::masking::kEstimatorNames, "cca | kcca");
  app.add_option("--pca", o.score.pca, "principal components per view")->capture_default_str();
  app.add_option("--draws", o.score.draws, "mask draws")->capture_default_str();
  app.add_option("--patch-length", o.patch_length, "samples per patch")->capture_default_str();
  app.add_option("--ratio-sweep", o.ratio_sweep, "also score the schemes at these ratios")
      ->capture_default_str();
  bool no_leak_checks = false;
  app.add_flag("--no-leak-checks", no_leak_checks,
               "encoder: skip the shared-mask and mask-only scores");
  bool no_cross_modal = false;
  app.add_flag("--no-cross-modal", no_cross_modal, "skip the acc->gyro part");
  app.add_option("--seed", o.score.seed, "seed of the mask draws")->capture_default_str();
  app.add_option("--threads", o.score.threads, "OpenMP threads (0 = default)")
      ->capture_default_str();
  app.add_option("--json", o.json, "write results as JSON to this file");
  // --pca takes no effect on the kcca estimator
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::masking::unused_options(o.score));
  });
  return moca::tools::run_cli("simulation_study", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    o.cross_modal = !no_cross_modal;
    o.leak_checks = !no_leak_checks;
    o.schemes = moca::masking::split_spec_list(schemes, "--scheme");
    o.features = moca::masking::split_spec_list(features, "--features");
    if (!checkpoint.empty()) {
#ifdef MOCA_STUDIES_WITH_TORCH
      moca::model::InferenceOptions io;
      io.runtime.device = moca::model::Device::kCpu;
      io.runtime.threads = o.score.threads;
      o.encoder = moca::model::make_encoder_feature_map(checkpoint, io);
      o.encoder_source = checkpoint;
#else
      throw std::invalid_argument(
          "--checkpoint needs a build with MOCA_WITH_TORCH=ON (this one has no model layer)");
#endif
    }
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_simulation_study(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
