// simulation_study: the paper's simulation study (sigma_1 of cross vs sync masking on synthetic
// transitions), with CIs over mask draws. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#include "simulation_study.hpp"
#include "study_flags.hpp"
#ifdef MOCA_STUDIES_WITH_TORCH
#include "moca/model/eval/encoder_features.hpp"
#endif

int main(int argc, char** argv) {
  moca::sim::SimulationStudyOptions o;
  CLI::App app{
      "simulation_study: sigma_1(Gamma) of cross vs synchronised masking on synthetic "
      "transitions (the paper's simulation study), with CIs over mask draws"};
  moca::sim::add_study_data_flags(&app, o.data, "synthetic transitions",
                                  "seed of Algorithm 1 / the generator");
  moca::tools::add_schema_options(&app, o, moca::kEveryScope);  // SimulationStudyOptions::schema
  moca::sim::show_list_default(app, "--scheme", o.schemes);
  moca::sim::show_list_default(app, "--features", o.features);
  // Locals: a row on leak_checks or cross_modal would add --leak-checks / --cross-modal beside
  // the --no- switch (--x,!--no-x) and say its help the other way round.
  bool no_leak_checks = false;
  app.add_flag("--no-leak-checks", no_leak_checks,
               "encoder: skip the shared-mask and mask-only scores");
  bool no_cross_modal = false;
  app.add_flag("--no-cross-modal", no_cross_modal, "skip the acc->gyro part");
  // --pca takes no effect on the kcca estimator
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::masking::unused_options(o.score));
  });
  return moca::tools::run_cli("simulation_study", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    o.cross_modal = !no_cross_modal;
    o.leak_checks = !no_leak_checks;
    // the given texts, split as the flags always did (list_flags.hpp)
    o.schemes = moca::masking::split_spec_list(moca::sim::join_list(o.schemes), "--scheme");
    o.features = moca::masking::split_spec_list(moca::sim::join_list(o.features), "--features");
    if (!o.encoder_source.empty()) {  // --checkpoint
#ifdef MOCA_STUDIES_WITH_TORCH
      moca::model::InferenceOptions io;
      io.runtime.device = moca::model::Device::kCpu;
      io.runtime.threads = o.score.threads;
      o.encoder = moca::model::make_encoder_feature_map(o.encoder_source, io);
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
