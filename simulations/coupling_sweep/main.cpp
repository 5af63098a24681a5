// coupling_sweep: where does cross masking beat synchronised masking as the generator's
// cross-modal coupling goes from 0 to 1? See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "coupling_sweep.hpp"
#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

int main(int argc, char** argv) {
  moca::sim::CouplingSweepOptions o;
  CLI::App app{
      "coupling_sweep: cross vs sync masking scores over the generator's cross-modal "
      "coupling dial"};
  moca::tools::add_schema_options(&app, o, moca::kEveryScope);  // CouplingSweepOptions::schema
  moca::sim::show_list_default(app, "--scheme", o.schemes);
  moca::sim::show_list_default(app, "--features", o.features);
  // A local: a row on cross_modal would add --cross-modal beside it (--cross-modal,!--no-...).
  bool no_cross_modal = false;
  app.add_flag("--no-cross-modal", no_cross_modal, "skip the acc->gyro part");
  // --pca takes no effect on the kcca estimator
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::masking::unused_options(o.score));
  });
  return moca::tools::run_cli("coupling_sweep", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    o.cross_modal = !no_cross_modal;
    // the given texts, split as the flags always did (list_flags.hpp)
    o.schemes = moca::masking::split_spec_list(moca::sim::join_list(o.schemes), "--scheme");
    o.features = moca::masking::split_spec_list(moca::sim::join_list(o.features), "--features");
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_coupling_sweep(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
