// coupling_sweep: where does cross masking beat synchronised masking as the generator's
// cross-modal coupling goes from 0 to 1? See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "coupling_sweep.hpp"
#include "enum_option.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  moca::sim::CouplingSweepOptions o;
  std::string schemes = "cross,sync", features = "raw,patch-mean";
  CLI::App app{
      "coupling_sweep: cross vs sync masking scores over the generator's cross-modal "
      "coupling dial"};
  app.add_option("--couplings", o.couplings, "coupling values in [0, 1] (space-separated)")
      ->capture_default_str();
  app.add_option("--samples", o.samples, "windows per coupling")->capture_default_str();
  app.add_option("--scheme", schemes, "comma-separated policy specs (first two compared)")
      ->capture_default_str();
  app.add_option("--ratio", o.ratio, "mask ratio for specs without one")->capture_default_str();
  app.add_option("--features", features, "comma-separated: raw, patch-mean")->capture_default_str();
  moca::tools::add_enum_option(&app, "--estimator", o.score.estimator,
                               moca::masking::kEstimatorNames, "cca | kcca");
  app.add_option("--pca", o.score.pca, "principal components per view")->capture_default_str();
  app.add_option("--draws", o.score.draws, "mask draws")->capture_default_str();
  app.add_option("--patch-length", o.patch_length, "samples per patch")->capture_default_str();
  bool no_cross_modal = false;
  app.add_flag("--no-cross-modal", no_cross_modal, "skip the acc->gyro part");
  app.add_option("--data-seed", o.data_seed, "generator seed")->capture_default_str();
  app.add_option("--seed", o.score.seed, "seed of the mask draws")->capture_default_str();
  app.add_option("--threads", o.score.threads, "OpenMP threads (0 = default)")
      ->capture_default_str();
  app.add_option("--json", o.json, "write results as JSON to this file");
  // --pca takes no effect on the kcca estimator
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::masking::unused_options(o.score));
  });
  return moca::tools::run_cli("coupling_sweep", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    o.cross_modal = !no_cross_modal;
    o.schemes = moca::masking::split_spec_list(schemes, "--scheme");
    o.features = moca::masking::split_spec_list(features, "--features");
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_coupling_sweep(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
